package io.kvrouter.config.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.config.serialization.Echo;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Down;
import org.junit.jupiter.api.Test;

class ClusterFormationTest {

  private static final Duration FORMATION = Duration.ofSeconds(30);

  private static Set<Address> upMembers(ActorSystem<?> system) {
    return StreamSupport.stream(Cluster.get(system).state().getMembers().spliterator(), false)
        .filter(m -> m.status() == MemberStatus.up())
        .map(m -> m.address())
        .collect(Collectors.toSet());
  }

  @Test
  void threeNodes_allUp_thenDownedNodeIsRemovedOnTheOthers() {
    try (TestNodes nodes = new TestNodes()) {
      ActorSystem<Void> a = nodes.start(List.of("ingress"), Map.of());
      ActorSystem<Void> b = nodes.start(List.of("ingress"), Map.of());
      ActorSystem<Void> c = nodes.start(List.of("agent"), Map.of());
      Set<Address> all = Set.of(TestNodes.address(a), TestNodes.address(b), TestNodes.address(c));

      ActorTestKit kit = ActorTestKit.create(a);
      TestProbe<Object> probe = kit.createTestProbe();
      probe.awaitAssert(
          FORMATION,
          () -> {
            for (ActorSystem<Void> s : List.of(a, b, c)) {
              assertThat(upMembers(s)).isEqualTo(all);
            }
            return null;
          });
      assertThat(Cluster.get(c).selfMember().hasRole("agent")).isTrue();

      Address downed = TestNodes.address(c);
      Cluster.get(a).manager().tell(new Down(downed));

      probe.awaitAssert(
          FORMATION,
          () -> {
            for (ActorSystem<Void> s : List.of(a, b)) {
              assertThat(upMembers(s))
                  .containsExactlyInAnyOrder(TestNodes.address(a), TestNodes.address(b));
              assertThat(Cluster.get(s).state().getMembers())
                  .noneMatch(m -> m.address().equals(downed));
            }
            return null;
          });
    }
  }

  @Test
  void kryoMessageWithTypedActorRefAndLongArray_crossesNodesAndIsAnswered() {
    try (TestNodes nodes = new TestNodes()) {
      ActorSystem<Void> client = nodes.start(List.of("ingress"), Map.of());
      ActorSystem<Void> server = nodes.start(List.of("agent"), Map.of("agent", Echo::create));
      ActorTestKit kit = ActorTestKit.create(client);
      TestProbe<Object> waiter = kit.createTestProbe();
      waiter.awaitAssert(
          FORMATION,
          () -> {
            assertThat(upMembers(client)).hasSize(2);
            return null;
          });

      String path = TestNodes.address(server) + "/user/agent-guardian";
      ActorRef<Echo.Request> remote = ActorRefResolver.get(client).resolveActorRef(path);
      TestProbe<Echo.Reply> replies = kit.createTestProbe();
      long[] values = {1L, -2L, Long.MAX_VALUE, 40L};

      remote.tell(new Echo.Request(values, replies.getRef()));

      Echo.Reply reply = replies.receiveMessage(Duration.ofSeconds(15));
      assertThat(reply.sum()).isEqualTo(1L - 2L + Long.MAX_VALUE + 40L);
      assertThat(reply.values()).containsExactly(values);
      assertThat(reply.node()).isEqualTo(TestNodes.address(server).toString());
    }
  }
}

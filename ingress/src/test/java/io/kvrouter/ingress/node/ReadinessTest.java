package io.kvrouter.ingress.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.ingress.node.IngressReadiness.Component;
import io.kvrouter.ingress.node.IngressReadiness.Status;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

class ReadinessTest {

  private static final ActorTestKit KIT = ActorTestKit.create();

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  private static Status get(ActorRef<IngressReadiness.Command> readiness) {
    TestProbe<Status> probe = KIT.createTestProbe();
    readiness.tell(new IngressReadiness.Get(probe.getRef()));
    return probe.receiveMessage();
  }

  private static void reportAll(ActorRef<IngressReadiness.Command> readiness, boolean ready) {
    for (Component c : Component.values()) {
      readiness.tell(new IngressReadiness.Report(c, ready));
    }
  }

  @Test
  void notReady_untilEveryComponentHasReportedReady() {
    ActorRef<IngressReadiness.Command> readiness = KIT.spawn(IngressReadiness.create());
    assertThat(get(readiness)).isEqualTo(new Status(false, false, Set.of(Component.values())));

    readiness.tell(new IngressReadiness.Report(Component.HTTP, true));
    readiness.tell(new IngressReadiness.Report(Component.REPLICAS, true));
    assertThat(get(readiness)).isEqualTo(new Status(false, false, Set.of(Component.PEERS)));

    readiness.tell(new IngressReadiness.Report(Component.PEERS, true));
    assertThat(get(readiness).ready()).isTrue();
  }

  @Test
  void aComponentFallingBehind_makesTheNodeNotReadyAgain() {
    ActorRef<IngressReadiness.Command> readiness = KIT.spawn(IngressReadiness.create());
    reportAll(readiness, true);
    readiness.tell(new IngressReadiness.Report(Component.REPLICAS, false));
    assertThat(get(readiness)).isEqualTo(new Status(false, false, Set.of(Component.REPLICAS)));
  }

  @Test
  void drain_makesTheNodeNotReadyForGood() {
    ActorRef<IngressReadiness.Command> readiness = KIT.spawn(IngressReadiness.create());
    reportAll(readiness, true);
    readiness.tell(IngressReadiness.Drain.INSTANCE);
    reportAll(readiness, true);
    assertThat(get(readiness)).isEqualTo(new Status(false, true, Set.of()));
  }

  @Test
  void subscriber_hearsTheCurrentStatusThenEveryChange_andNothingElse() {
    ActorRef<IngressReadiness.Command> readiness = KIT.spawn(IngressReadiness.create());
    TestProbe<Status> subscriber = KIT.createTestProbe();
    readiness.tell(new IngressReadiness.Subscribe(subscriber.getRef()));
    assertThat(subscriber.receiveMessage().ready()).isFalse();

    reportAll(readiness, true);
    subscriber.receiveMessage(); // HTTP
    subscriber.receiveMessage(); // REPLICAS
    assertThat(subscriber.receiveMessage().ready()).isTrue();

    readiness.tell(new IngressReadiness.Report(Component.PEERS, true)); // no change
    readiness.tell(IngressReadiness.Drain.INSTANCE);
    assertThat(subscriber.receiveMessage()).isEqualTo(new Status(false, true, Set.of()));
    subscriber.expectNoMessage();
  }
}

package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.config.node.NodeBootstrap;
import io.kvrouter.config.node.NodeSettings;
import io.kvrouter.protocol.AgentRequest;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaCleared;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.RequestReplay;
import io.kvrouter.protocol.SnapshotReply;
import io.kvrouter.protocol.Topics;
import io.kvrouter.sim.MockerTimingModel;
import io.kvrouter.sim.SimEngine;
import io.kvrouter.sim.SimEngineConfig;
import io.kvrouter.sim.SimEngineSettings;
import io.kvrouter.testing.LoopbackHttp;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.Test;

/**
 * Two cluster nodes in one JVM: an agent node started through NodeBootstrap with the AgentGuardian,
 * and a listener node that subscribes to the agent's topics, finds the agent through the
 * Receptionist and asks it for a replay across the wire (Kryo).
 */
class AgentClusterTest {

  private static final LinkedBlockingQueue<Object> SEEN = new LinkedBlockingQueue<>();

  /** The listener node's guardian: forwards everything it receives to {@link #SEEN}. */
  private static Behavior<?> listener() {
    return Behaviors.<Object>setup(
        ctx -> {
          ActorRef<Topic.Command<KvEventBatch>> events = ctx.spawn(Topics.kvEvents(), "events");
          ActorRef<Topic.Command<ReplicaLoad>> load = ctx.spawn(Topics.replicaLoad(), "load");
          events.tell(Topic.subscribe(ctx.getSelf().unsafeUpcast().narrow()));
          load.tell(Topic.subscribe(ctx.getSelf().unsafeUpcast().narrow()));
          ActorRef<Receptionist.Listing> listings =
              ctx.messageAdapter(Receptionist.Listing.class, l -> l);
          ctx.getSystem()
              .receptionist()
              .tell(Receptionist.subscribe(ReplicaAgent.SERVICE_KEY, listings));
          return Behaviors.receiveMessage(
              msg -> {
                if (msg instanceof Receptionist.Listing l) {
                  for (ActorRef<AgentRequest> agent :
                      l.getServiceInstances(ReplicaAgent.SERVICE_KEY)) {
                    agent.tell(
                        new RequestReplay(
                            "sim-0", Long.MIN_VALUE, 0, ctx.getSelf().unsafeUpcast().narrow()));
                  }
                }
                SEEN.add(msg);
                return Behaviors.same();
              });
        });
  }

  @Test
  void batchesLoadAndReplayCrossTheClusterFromAnAgentNode() throws Exception {
    SimEngine engine =
        SimEngine.start(
            SimEngineSettings.loopback()
                .withEngine(
                    SimEngineConfig.defaults()
                        .withNumBlocks(128)
                        .withTiming(new MockerTimingModel(50))));
    ReplicaSpec spec = AgentTestSupport.spec(engine, "sim-model");
    AgentSettings settings =
        AgentSettings.of(List.of(spec)).withHeartbeat(Duration.ofMillis(300), 3);
    ActorSystem<Void> agentNode =
        NodeBootstrap.start(
            NodeSettings.dev(List.of(NodeSettings.ROLE_AGENT), List.of()),
            Map.of(NodeSettings.ROLE_AGENT, AgentGuardian.roleGuardian(settings)));
    ActorSystem<Void> listenerNode = null;
    try {
      String seed = Cluster.get(agentNode).selfMember().address().toString();
      listenerNode =
          NodeBootstrap.start(
              NodeSettings.dev(List.of(NodeSettings.ROLE_INGRESS), List.of(seed)),
              Map.of(NodeSettings.ROLE_INGRESS, AgentClusterTest::listener));

      // an unknown epoch is answered with a snapshot, which crossed the wire
      SnapshotReply snap = poll(SnapshotReply.class, 30);
      assertThat(snap.snapshot().replicaId()).isEqualTo("sim-0");
      assertThat(snap.snapshot().events()[0]).isEqualTo(new ReplicaCleared());

      // load heartbeats arrive from the other node
      ReplicaLoad load = poll(ReplicaLoad.class, 30);
      assertThat(load.replicaId()).isEqualTo("sim-0");

      // once the topic reaches this node, a completion's blocks do too
      KvEventBatch stored = null;
      for (int i = 0; i < 30 && stored == null; i++) {
        complete(engine, "cluster wide hello number " + i + " ".repeat(40));
        stored = pollMatching(5);
      }
      assertThat(stored).as("a BlocksStored batch reached the listener node").isNotNull();
      assertThat(stored.replicaId()).isEqualTo("sim-0");
      assertThat(stored.epoch()).isEqualTo(snap.snapshot().epoch());
    } finally {
      if (listenerNode != null) {
        listenerNode.terminate();
        listenerNode.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
      agentNode.terminate();
      agentNode.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      engine.close();
    }
  }

  private static <T> T poll(Class<T> type, int seconds) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (System.nanoTime() < deadline) {
      Object o = SEEN.poll(100, TimeUnit.MILLISECONDS);
      if (type.isInstance(o)) {
        return type.cast(o);
      }
    }
    throw new AssertionError("no " + type.getSimpleName() + " within " + seconds + " s");
  }

  private static KvEventBatch pollMatching(int seconds) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (System.nanoTime() < deadline) {
      Object o = SEEN.poll(100, TimeUnit.MILLISECONDS);
      if (o instanceof KvEventBatch b
          && Arrays.stream(b.events()).anyMatch(e -> e instanceof BlocksStored)) {
        return b;
      }
    }
    return null;
  }

  private static void complete(SimEngine engine, String prompt) throws Exception {
    HttpResponse<String> r =
        LoopbackHttp.post(
            engine.baseUrl() + "/v1/completions",
            "{\"prompt\":\"" + prompt + "\",\"max_tokens\":2}");
    assertThat(r.statusCode()).isEqualTo(200);
  }
}

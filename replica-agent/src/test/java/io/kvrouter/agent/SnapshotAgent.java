package io.kvrouter.agent;

import com.typesafe.config.Config;
import io.kvrouter.protocol.AgentRequest;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplayReply;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.RequestReplay;
import io.kvrouter.protocol.SnapshotReply;
import io.kvrouter.protocol.Tier;
import io.kvrouter.protocol.Topics;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.pubsub.Topic;

/**
 * A replica's agent started against an engine double for the engine-fault tests (heartbeat 100 ms,
 * alignment probe off), registered, with a probe on its events topic and its picture of the replica
 * read from the snapshot it gives every tracker.
 */
final class SnapshotAgent implements AutoCloseable {

  private static final Duration WAIT = Duration.ofSeconds(10);

  final ActorRef<AgentRequest> ref;
  final TestProbe<KvEventBatch> events;
  final String replicaId;
  private final ActorTestKit testKit;

  private SnapshotAgent(
      ActorTestKit testKit, ActorRef<AgentRequest> ref, TestProbe<KvEventBatch> events, String id) {
    this.testKit = testKit;
    this.ref = ref;
    this.events = events;
    this.replicaId = id;
  }

  /** Spawns the agent of {@code spec} with {@code config} and waits until it is registered. */
  static SnapshotAgent start(ActorTestKit testKit, ReplicaSpec spec, Config config) {
    AgentSettings base = AgentSettings.fromConfig(config, List.of(spec));
    AgentSettings settings =
        base.withHeartbeat(Duration.ofMillis(100), 3)
            .withAlignment(base.alignment().withProbe(false));
    TestProbe<KvEventBatch> events = testKit.createTestProbe();
    ActorRef<Topic.Command<KvEventBatch>> eventsTopic =
        testKit.spawn(Topics.kvEvents(), "events-" + spec.info().targetId().replace('#', '-'));
    ActorRef<Topic.Command<ReplicaLoad>> loadTopic =
        testKit.spawn(Topics.replicaLoad(), "load-" + spec.info().targetId().replace('#', '-'));
    eventsTopic.tell(Topic.subscribe(events.getRef()));
    ActorRef<AgentRequest> agent =
        testKit.spawn(ReplicaAgent.create(spec, settings, eventsTopic, loadTopic));
    AgentTestSupport.awaitRegistered(testKit, agent);
    return new SnapshotAgent(testKit, agent, events, spec.info().targetId());
  }

  /** The router keys the agent holds for its replica, every tier. */
  Set<Long> held() {
    return held(null);
  }

  /** The router keys the agent holds for its replica in {@code tier} (null: every tier). */
  Set<Long> held(Tier tier) {
    TestProbe<ReplayReply> reply = testKit.createTestProbe();
    ref.tell(new RequestReplay(replicaId, Long.MIN_VALUE, 0, reply.getRef()));
    Set<Long> keys = new HashSet<>();
    for (KvEvent e : ((SnapshotReply) reply.receiveMessage(WAIT)).snapshot().events()) {
      if (e instanceof BlocksStored s && (tier == null || s.tier() == tier)) {
        for (long k : s.blockKeys()) {
          keys.add(k);
        }
      }
    }
    return keys;
  }

  @Override
  public void close() {
    testKit.stop(ref, WAIT);
  }
}

package io.kvrouter.ingress.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.routing.ReplicaDirectory;
import io.kvrouter.protocol.AgentRequest;
import io.kvrouter.protocol.AlignmentStatus;
import io.kvrouter.protocol.GetInfo;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.Topics;
import io.kvrouter.tracker.actor.KvTracker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** The feeds' side of an agent's registration, on a one-node cluster. */
class TrackerFeedsTest {

  private static final ActorTestKit testKit =
      ActorTestKit.create(
          ConfigFactory.parseString(
                  "pekko.actor.provider = cluster\n"
                      + "pekko.remote.artery.canonical.hostname = 127.0.0.1\n"
                      + "pekko.remote.artery.canonical.port = 0\n")
              .withFallback(ConfigFactory.load()));

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  /**
   * An agent that does not answer the first GetInfo (busy, or the ask was lost) and whose listing
   * then never changes: before, the ingress forgot it until some listing change, which may never
   * come, and the replica stayed unknown (the 600 s chaos run ended with an ingress listing one
   * replica of two).
   */
  @Test
  void anAgentThatMissesItsFirstGetInfo_isAskedAgain_andItsReplicaJoins() {
    ReplicaInfo info = replica("engine-0", List.of());
    AtomicInteger asked = new AtomicInteger();
    ReplicaDirectory directory = new ReplicaDirectory();
    awaitJoined(info, directory, Duration.ofMillis(300), () -> asked.incrementAndGet() > 1);
    assertThat(asked.get()).isGreaterThanOrEqualTo(2);
    assertThat(directory.get("engine-0")).isPresent();
  }

  /**
   * A known replica announced again with other LoRA adapters (the agent re-reads them) reaches the
   * directory; an announcement of a replica no agent registered does not bring it in.
   */
  @Test
  void aReannouncedReplica_updatesItsAdapters_andAnUnknownOneIsIgnored() {
    ReplicaInfo info = replica("engine-1", List.of());
    ReplicaDirectory directory = new ReplicaDirectory();
    awaitJoined(info, directory, Duration.ofSeconds(3), () -> true);
    assertThat(directory.adapter("sql")).isEmpty();

    ReplicaInfo withSql = replica("engine-1", List.of("sql"));
    ReplicaInfo stranger = replica("engine-9", List.of("chat"));
    ActorRef<Topic.Command<ReplicaInfo>> topic = testKit.spawn(Topics.replicaInfo());
    TestProbe<Object> waiting = testKit.createTestProbe();
    waiting.awaitAssert(
        Duration.ofSeconds(10),
        Duration.ofMillis(100),
        () -> {
          topic.tell(Topic.publish(stranger));
          topic.tell(Topic.publish(withSql)); // after the stranger: once it is in, so was that
          assertThat(directory.adapter("sql")).isPresent();
          return null;
        });
    assertThat(directory.adapter("sql").get().holders()).containsExactly("engine-1");
    assertThat(directory.baseModel("sql")).isEqualTo("m");
    assertThat(directory.get("engine-9")).isEmpty();
    assertThat(directory.adapter("chat")).isEmpty();
  }

  /**
   * A known replica announced again with another alignment verdict (its engine restarted and the
   * probe found a mismatch) reaches the tracker, which decides whether to trust its index by it.
   */
  @Test
  void aReannouncedReplica_withAnotherAlignment_reachesTheTracker() {
    ReplicaInfo info = replica("engine-2", List.of());
    TestProbe<KvTracker.Command> tracker =
        awaitJoined(info, new ReplicaDirectory(), Duration.ofSeconds(3), () -> true);

    ReplicaInfo unaligned =
        info.with(info.engine(), AlignmentStatus.unaligned("tokenizer: the engine's first block"));
    ActorRef<Topic.Command<ReplicaInfo>> topic = testKit.spawn(Topics.replicaInfo());
    testKit
        .createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(10),
            Duration.ofMillis(100),
            () -> {
              topic.tell(Topic.publish(unaligned)); // again until the topic has its subscriber
              awaitUp(tracker, unaligned, Duration.ofMillis(300));
              return null;
            });
  }

  /** Replica {@code id} of model m (whose agent serves no extra API) with {@code adapters}. */
  private static ReplicaInfo replica(String id, List<String> adapters) {
    return new ReplicaInfo(
        id,
        0,
        "m",
        "http://127.0.0.1:1/" + id,
        16,
        List.of(),
        "both",
        true,
        true,
        List.of(),
        1,
        adapters);
  }

  /**
   * Joins the one-node cluster, registers an agent answering a GetInfo with {@code info} when
   * {@code answers} says so, starts the feeds over {@code directory} and waits until they brought
   * the replica up; returns the tracker's probe.
   */
  private static TestProbe<KvTracker.Command> awaitJoined(
      ReplicaInfo info,
      ReplicaDirectory directory,
      Duration askTimeout,
      java.util.function.BooleanSupplier answers) {
    Cluster cluster = Cluster.get(testKit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    ActorRef<AgentRequest> agent =
        testKit.spawn(
            Behaviors.receiveMessage(
                m -> {
                  if (m instanceof GetInfo get && answers.getAsBoolean()) {
                    get.replyTo().tell(info);
                  }
                  return Behaviors.same();
                }));
    testKit.system().receptionist().tell(Receptionist.register(AgentRequest.SERVICE_KEY, agent));
    TestProbe<KvTracker.Command> tracker = testKit.createTestProbe();
    testKit.spawn(
        TrackerFeeds.create(
            tracker.getRef(),
            directory,
            new IngressMetrics(),
            testKit.<IngressReadiness.Command>createTestProbe().getRef(),
            askTimeout,
            new FaultInjector<KvEventBatch>(0, 0, 0, 1)));
    awaitUp(tracker, info, Duration.ofSeconds(20));
    return tracker;
  }

  /** Waits until {@code tracker} is told {@code info} is up. */
  private static void awaitUp(
      TestProbe<KvTracker.Command> tracker, ReplicaInfo info, Duration within) {
    tracker.fishForMessage(
        within,
        c ->
            c instanceof KvTracker.ReplicaUp up && up.info().equals(info)
                ? FishingOutcomes.complete()
                : FishingOutcomes.continueAndIgnore());
  }
}

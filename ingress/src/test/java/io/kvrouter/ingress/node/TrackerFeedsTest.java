package io.kvrouter.ingress.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.routing.ReplicaDirectory;
import io.kvrouter.protocol.AgentRequest;
import io.kvrouter.protocol.GetInfo;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.tracker.actor.KvTracker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
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
    Cluster cluster = Cluster.get(testKit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    ReplicaInfo info =
        new ReplicaInfo(
            "engine-0", 0, "m", "http://127.0.0.1:1", 16, List.of(), "both", true, true);
    AtomicInteger asked = new AtomicInteger();
    ActorRef<AgentRequest> agent =
        testKit.spawn(
            Behaviors.receiveMessage(
                m -> {
                  if (m instanceof GetInfo get && asked.incrementAndGet() > 1) {
                    get.replyTo().tell(info);
                  }
                  return Behaviors.same();
                }));
    testKit.system().receptionist().tell(Receptionist.register(AgentRequest.SERVICE_KEY, agent));
    TestProbe<KvTracker.Command> tracker = testKit.createTestProbe();
    TestProbe<Readiness.Command> readiness = testKit.createTestProbe();
    ReplicaDirectory directory = new ReplicaDirectory();
    testKit.spawn(
        TrackerFeeds.create(
            tracker.getRef(),
            directory,
            new IngressMetrics(),
            readiness.getRef(),
            Duration.ofMillis(300),
            new FaultInjector<KvEventBatch>(0, 0, 0, 1)));

    tracker.fishForMessage(
        Duration.ofSeconds(20),
        c ->
            c instanceof KvTracker.ReplicaUp up && up.info().equals(info)
                ? FishingOutcomes.complete()
                : FishingOutcomes.continueAndIgnore());
    assertThat(asked.get()).isGreaterThanOrEqualTo(2);
    assertThat(directory.get("engine-0")).isPresent();
  }
}

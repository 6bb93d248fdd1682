package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.AgentRequest;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.Topics;
import io.kvrouter.sim.MockerTimingModel;
import io.kvrouter.sim.SimEngine;
import io.kvrouter.sim.SimEngineConfig;
import io.kvrouter.sim.SimEngineSettings;
import java.time.Duration;
import java.util.List;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** The agent's part of the drain: its replica leaves the listing and does not come back. */
class AgentDrainTest {

  private static final ActorTestKit testKit = ActorTestKit.create();

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  @Test
  void drain_deregistersTheReplica_andHealthyEngineChecksDoNotRegisterItAgain() throws Exception {
    SimEngine engine =
        SimEngine.start(
            SimEngineSettings.loopback()
                .withModel("m")
                .withEngine(SimEngineConfig.defaults().withTiming(new MockerTimingModel(50))));
    try {
      ReplicaSpec spec = new ReplicaSpec("sim-0", 0, "m", engine.baseUrl(), 16, null, null, "");
      AgentSettings settings =
          AgentSettings.of(List.of(spec)).withHeartbeat(Duration.ofMillis(100), 2);
      ActorRef<Topic.Command<KvEventBatch>> events = testKit.spawn(Topics.kvEvents());
      ActorRef<Topic.Command<ReplicaLoad>> loads = testKit.spawn(Topics.replicaLoad());
      TestProbe<ReplicaLoad> heartbeats = testKit.createTestProbe();
      loads.tell(Topic.subscribe(heartbeats.getRef()));
      ActorRef<AgentRequest> agent =
          testKit.spawn(ReplicaAgent.create(spec, settings, events, loads));
      TestProbe<Receptionist.Listing> listing = AgentTestSupport.awaitRegistered(testKit, agent);

      TestProbe<Done> done = testKit.createTestProbe();
      agent.tell(new ReplicaAgent.Drain(done.getRef()));
      done.expectMessage(Done.getInstance());
      long drainedAt = System.currentTimeMillis();
      listing.fishForMessage(
          Duration.ofSeconds(10),
          l ->
              l.getServiceInstances(AgentRequest.SERVICE_KEY).isEmpty()
                  ? FishingOutcomes.complete()
                  : FishingOutcomes.continueAndIgnore());
      // Three healthy checks later (each publishes a heartbeat, after the point where a healthy
      // engine's replica would be registered again), the replica is still not listed.
      int[] after = {0};
      heartbeats.fishForMessage(
          Duration.ofSeconds(30),
          h ->
              h.timestampMillis() > drainedAt && ++after[0] >= 3
                  ? FishingOutcomes.complete()
                  : FishingOutcomes.continueAndIgnore());
      TestProbe<Receptionist.Listing> now = testKit.createTestProbe();
      testKit
          .system()
          .receptionist()
          .tell(Receptionist.find(AgentRequest.SERVICE_KEY, now.getRef()));
      assertThat(now.receiveMessage().getServiceInstances(AgentRequest.SERVICE_KEY)).isEmpty();
    } finally {
      engine.close();
    }
  }
}

package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.AgentRequest;
import io.kvrouter.protocol.GetInfo;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.Topics;
import io.kvrouter.sim.MockerTimingModel;
import io.kvrouter.sim.SimEngine;
import io.kvrouter.sim.SimEngineConfig;
import io.kvrouter.sim.SimEngineSettings;
import io.kvrouter.testing.LoopbackHttp;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The agent learns its engine's LoRA adapters from {@code /v1/models} before it registers the
 * replica, and announces the replica again on {@code kvrouter-replica-info} when adapters are
 * loaded or unloaded at run time.
 */
class ReplicaAgentAdaptersTest {

  private static final ActorTestKit testKit = ActorTestKit.create();

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  @Test
  void adaptersReachTheReplicaInfoAndAChangeIsAnnouncedAgain() throws Exception {
    try (SimEngine engine =
        SimEngine.start(
            SimEngineSettings.loopback()
                .withModel("m")
                .withApis(io.kvrouter.sim.SimApis.vllm().withRuntimeLora(true))
                .withLoraModules(Map.of("sql", "/adapters/sql"))
                .withEngine(
                    SimEngineConfig.defaults()
                        .withNumBlocks(128)
                        .withTiming(new MockerTimingModel(50))))) {
      ReplicaSpec spec = AgentTestSupport.spec(engine, "m");
      AgentSettings settings =
          AgentSettings.of(List.of(spec))
              .withHeartbeat(Duration.ofMillis(200), 2)
              .withAdapterRefresh(Duration.ofMillis(100));
      ActorRef<Topic.Command<KvEventBatch>> eventsTopic = testKit.spawn(Topics.kvEvents());
      ActorRef<Topic.Command<ReplicaLoad>> loadTopic = testKit.spawn(Topics.replicaLoad());
      ActorRef<Topic.Command<ReplicaInfo>> infoTopic = testKit.spawn(Topics.replicaInfo());
      TestProbe<ReplicaInfo> announced = testKit.createTestProbe();
      infoTopic.tell(Topic.subscribe(announced.getRef()));
      TestProbe<Topic.TopicStats> stats = testKit.createTestProbe();
      stats.awaitAssert(
          Duration.ofSeconds(5),
          () -> {
            infoTopic.tell(Topic.getTopicStats(stats.getRef()));
            assertThat(stats.receiveMessage().localSubscriberCount()).isEqualTo(1);
            return null;
          });

      ActorRef<AgentRequest> agent =
          testKit.spawn(ReplicaAgent.create(spec, settings, eventsTopic, loadTopic, infoTopic));
      AgentTestSupport.awaitRegistered(testKit, agent);
      TestProbe<ReplicaInfo> info = testKit.createTestProbe();
      agent.tell(new GetInfo(info.getRef()));
      ReplicaInfo first = info.receiveMessage();
      assertThat(first.adapters())
          .as("learned from /v1/models before registering")
          .containsExactly("sql");
      assertThat(first.servesAdapter("sql")).isTrue();

      assertThat(
              LoopbackHttp.post(
                      engine.baseUrl() + "/v1/load_lora_adapter",
                      "{\"lora_name\":\"chat\",\"lora_path\":\"/adapters/chat\"}")
                  .statusCode())
          .isEqualTo(200);
      awaitAnnounced(announced, List.of("sql", "chat"));

      assertThat(
              LoopbackHttp.post(
                      engine.baseUrl() + "/v1/unload_lora_adapter", "{\"lora_name\":\"sql\"}")
                  .statusCode())
          .isEqualTo(200);
      ReplicaInfo last = awaitAnnounced(announced, List.of("chat"));
      assertThat(last.targetId()).isEqualTo("sim-0");
      assertThat(last.model()).isEqualTo("m");
      agent.tell(new GetInfo(info.getRef()));
      assertThat(info.receiveMessage().adapters()).containsExactly("chat");
    }
  }

  private static ReplicaInfo awaitAnnounced(TestProbe<ReplicaInfo> probe, List<String> adapters) {
    return probe
        .fishForMessage(
            Duration.ofSeconds(10),
            i ->
                i.adapters().equals(adapters)
                    ? FishingOutcomes.complete()
                    : FishingOutcomes.continueAndIgnore())
        .get(0);
  }
}

package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import io.kvrouter.protocol.AgentRequest;
import io.kvrouter.protocol.AlignmentStatus;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.GetInfo;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplayReply;
import io.kvrouter.protocol.Replayed;
import io.kvrouter.protocol.ReplicaCleared;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.RequestReplay;
import io.kvrouter.protocol.SnapshotReply;
import io.kvrouter.protocol.Topics;
import io.kvrouter.sim.ByteTokenizer;
import io.kvrouter.sim.MockerTimingModel;
import io.kvrouter.sim.SimEngine;
import io.kvrouter.sim.SimEngineConfig;
import io.kvrouter.sim.SimEngineSettings;
import io.kvrouter.testing.LoopbackHttp;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** The agent actor in a local (non-cluster) ActorSystem against a real in-process sim engine. */
class ReplicaAgentTest {

  private static final ActorTestKit testKit = ActorTestKit.create();

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  @Test
  void agentRegistersPublishesStampedBatchesAndLoad_answersReplay_andDeregistersADeadEngine()
      throws Exception {
    SimEngine engine =
        SimEngine.start(
            SimEngineSettings.loopback()
                .withModel("m")
                .withEngine(
                    SimEngineConfig.defaults()
                        .withNumBlocks(128)
                        .withTiming(new MockerTimingModel(50))));
    try {
      ReplicaSpec spec = AgentTestSupport.spec(engine, "m");
      AgentSettings settings =
          AgentSettings.of(List.of(spec)).withHeartbeat(Duration.ofMillis(200), 2);
      TestProbe<KvEventBatch> events = testKit.createTestProbe();
      TestProbe<ReplicaLoad> loads = testKit.createTestProbe();
      ActorRef<Topic.Command<KvEventBatch>> eventsTopic = testKit.spawn(Topics.kvEvents());
      ActorRef<Topic.Command<ReplicaLoad>> loadTopic = testKit.spawn(Topics.replicaLoad());
      eventsTopic.tell(Topic.subscribe(events.getRef()));
      loadTopic.tell(Topic.subscribe(loads.getRef()));
      awaitSubscribers(eventsTopic, loadTopic);

      ActorRef<AgentRequest> agent =
          testKit.spawn(ReplicaAgent.create(spec, settings, eventsTopic, loadTopic));

      // registered with the receptionist, and says what it serves
      TestProbe<Receptionist.Listing> listing = AgentTestSupport.awaitRegistered(testKit, agent);
      TestProbe<ReplicaInfo> info = testKit.createTestProbe();
      agent.tell(new GetInfo(info.getRef()));
      ReplicaInfo i = info.receiveMessage();
      assertThat(i.replicaId()).isEqualTo("sim-0");
      assertThat(i.kvEvents()).isTrue();
      assertThat(i.blockSize()).isEqualTo(16);
      assertThat(i.apis())
          .as("learned from the engine's /openapi.json before registering")
          .containsExactly("/v1/messages", "/v1/messages/count_tokens", "/v1/responses");
      assertThat(i.engine().kind()).as("kvrouter.agent.engine.kind").isEqualTo("vllm");
      assertThat(i.engine().blockSize()).as("the probe saw the engine's blocks").isEqualTo(16);
      assertThat(i.alignment()).as("the probe passed").isEqualTo(AlignmentStatus.ALIGNED);

      // the epoch opens with ReplicaCleared at seq 0; the alignment probe's blocks came next (the
      // replica registered, so the probe passed), then a completion's blocks follow
      KvEventBatch opening = events.receiveMessage(Duration.ofSeconds(5));
      assertThat(opening.seq()).isZero();
      assertThat(opening.events()).containsExactly(new ReplicaCleared());
      long firstKey =
          new TrackerRouterKeys("m")
              .keys(BlocksStored.ROOT, ByteTokenizer.encode("x".repeat(100)), 16, null)[0];
      complete(engine, "x".repeat(100));
      KvEventBatch stored =
          events
              .fishForMessage(
                  Duration.ofSeconds(10),
                  b ->
                      Arrays.stream(b.events())
                              .anyMatch(
                                  e ->
                                      e instanceof BlocksStored s
                                          && s.parentKey() == BlocksStored.ROOT
                                          && s.blockKeys()[0] == firstKey)
                          ? FishingOutcomes.complete()
                          : FishingOutcomes.continueAndIgnore())
              .get(0);
      assertThat(stored.epoch()).isEqualTo(opening.epoch());
      assertThat(stored.seq()).as("the probe's batches came before").isGreaterThan(1);

      // load heartbeats come from the engine's /metrics
      ReplicaLoad load =
          loads
              .fishForMessage(
                  Duration.ofSeconds(5),
                  l ->
                      l.prefixQueries() > 0
                          ? org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes.complete()
                          : org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes
                              .continueAndIgnore())
              .get(0);
      assertThat(load.replicaId()).isEqualTo("sim-0");
      assertThat(load.epoch()).isEqualTo(opening.epoch());

      // replay from the ring; an unknown epoch gets a snapshot
      TestProbe<ReplayReply> replies = testKit.createTestProbe();
      agent.tell(new RequestReplay("sim-0", opening.epoch(), 0, replies.getRef()));
      Replayed replayed = (Replayed) replies.receiveMessage();
      assertThat(replayed.batches()).extracting(KvEventBatch::seq).startsWith(0L, 1L);
      agent.tell(new RequestReplay("sim-0", opening.epoch() - 1, 0, replies.getRef()));
      SnapshotReply snap = (SnapshotReply) replies.receiveMessage();
      assertThat(snap.snapshot().events()[0]).isEqualTo(new ReplicaCleared());
      assertThat(snap.snapshot().events().length - 1).isEqualTo(engine.cachedBlockHashes().length);

      // the engine dies: after two failed health checks the replica leaves the listing
      engine.close();
      listing.fishForMessage(
          Duration.ofSeconds(10),
          l ->
              l.getServiceInstances(ReplicaAgent.SERVICE_KEY).isEmpty()
                  ? org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes.complete()
                  : org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes
                      .continueAndIgnore());
      testKit.stop(agent);
    } finally {
      engine.close();
    }
  }

  /**
   * With {@code alignment.on-mismatch = warn}, an engine whose blocks do not line up (32-token
   * blocks where the agent declares 16) is registered, flagged unaligned with the probe's reason,
   * so trackers route to it by load alone and the dashboard shows why.
   */
  @Test
  void mismatchedEngine_underWarn_isRegisteredFlaggedUnaligned() throws Exception {
    SimEngine engine =
        SimEngine.start(
            SimEngineSettings.loopback()
                .withModel("m")
                .withEngine(SimEngineConfig.defaults().withNumBlocks(128).withBlockSize(32)));
    try {
      ReplicaSpec spec = AgentTestSupport.spec(engine, "m");
      AgentSettings settings = AgentSettings.of(List.of(spec));
      settings = settings.withAlignment(settings.alignment().withRefuseOnMismatch(false));
      ReplicaInfo i = registeredInfo(spec, settings);

      assertThat(i.alignment().state()).isEqualTo(AlignmentStatus.State.UNALIGNED);
      assertThat(i.alignment().reason()).contains("block size", "32");
      assertThat(i.engine().blockSize()).as("as the probe saw it").isEqualTo(32);
    } finally {
      engine.close();
    }
  }

  /**
   * An engine running EAGLE while the router's {@code speculative-method} says none: under warn it
   * is registered flagged unaligned, the reason naming the setting; with the setting right it is
   * aligned and announced with its method, which trackers credit its hits by.
   */
  @Test
  void eagleEngine_isFlaggedUntilTheRoutersSpeculativeSettingSaysSo() throws Exception {
    SimEngine engine =
        SimEngine.start(
            SimEngineSettings.loopback()
                .withModel("m")
                .withEngine(
                    SimEngineConfig.defaults().withNumBlocks(128).withSpeculativeMethod("eagle")));
    try {
      ReplicaSpec spec = AgentTestSupport.spec(engine, "m");
      for (String setting : new String[] {"none", "eagle"}) {
        AgentSettings settings = AgentSettings.of(List.of(spec));
        settings =
            settings.withAlignment(
                settings
                    .alignment()
                    .withRefuseOnMismatch(false)
                    .withSpeculative(
                        ConfigFactory.parseString(
                            "kvrouter.models.m.speculative-method = " + setting),
                        List.of("m")));
        ReplicaInfo i = registeredInfo(spec, settings);

        if (setting.equals("none")) {
          assertThat(i.alignment().state()).isEqualTo(AlignmentStatus.State.UNALIGNED);
          assertThat(i.alignment().reason())
              .contains("speculative decoding", "kvrouter.models.\"m\".speculative-method");
        } else {
          assertThat(i.alignment().state())
              .as(i.alignment().reason())
              .isEqualTo(AlignmentStatus.State.ALIGNED);
          assertThat(i.engine().speculative()).isEqualTo("eagle");
          assertThat(i.engine().speculativeDecoding().dropsLastBlock()).isTrue();
        }
      }
    } finally {
      engine.close();
    }
  }

  /** What an agent of {@code spec} announces once registered; the agent is stopped after. */
  private static ReplicaInfo registeredInfo(ReplicaSpec spec, AgentSettings settings) {
    ActorRef<AgentRequest> agent =
        testKit.spawn(
            ReplicaAgent.create(
                spec,
                settings,
                testKit.spawn(Topics.kvEvents()),
                testKit.spawn(Topics.replicaLoad())));
    AgentTestSupport.awaitRegistered(testKit, agent);
    TestProbe<ReplicaInfo> info = testKit.createTestProbe();
    agent.tell(new GetInfo(info.getRef()));
    ReplicaInfo i = info.receiveMessage();
    testKit.stop(agent);
    return i;
  }

  private static void awaitSubscribers(
      ActorRef<Topic.Command<KvEventBatch>> a, ActorRef<Topic.Command<ReplicaLoad>> b) {
    TestProbe<Topic.TopicStats> stats = testKit.createTestProbe();
    for (ActorRef<? extends Topic.Command<?>> t :
        List.<ActorRef<? extends Topic.Command<?>>>of(a, b)) {
      stats.awaitAssert(
          Duration.ofSeconds(5),
          () -> {
            @SuppressWarnings("unchecked")
            ActorRef<Topic.Command<Object>> topic =
                (ActorRef<Topic.Command<Object>>) (ActorRef<?>) t;
            topic.tell(Topic.getTopicStats(stats.getRef()));
            assertThat(stats.receiveMessage().localSubscriberCount()).isEqualTo(1);
            return null;
          });
    }
  }

  private static void complete(SimEngine engine, String prompt) throws Exception {
    HttpResponse<String> r =
        LoopbackHttp.post(
            engine.baseUrl() + "/v1/completions",
            "{\"prompt\":\"" + prompt + "\",\"max_tokens\":3}");
    assertThat(r.statusCode()).isEqualTo(200);
  }
}

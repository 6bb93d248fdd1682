package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import io.kvrouter.agent.kvevents.KvEventSubscriber;
import io.kvrouter.sim.ByteTokenizer;
import io.kvrouter.sim.MockerTimingModel;
import io.kvrouter.sim.SimEngine;
import io.kvrouter.sim.SimEngineConfig;
import io.kvrouter.sim.SimEngineSettings;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The alignment probe against a running engine: it names the block size, the tokenizer or the hash
 * seed when the router's keys would never match the engine's blocks, and passes when they match.
 */
class AlignmentProbeTest {

  private static final String MODEL = "m";
  private static final AlignmentSettings SETTINGS =
      new AlignmentSettings(true, true, Duration.ofSeconds(3), 4);

  /** Probes an engine of {@code engineBlockSize} as a replica declared with block size 16. */
  private static AlignmentProbe.Result probe(
      int engineBlockSize, RouterTokenizer tokenizer, RouterKeyFunction keys) throws Exception {
    return probe(engineBlockSize, "none", tokenizer, keys, SETTINGS);
  }

  /**
   * Probes an engine running speculative decoding with {@code engineMethod} for a router whose
   * {@code kvrouter.models."m".speculative-method} is {@code routerMethod}.
   */
  private static AlignmentProbe.Result probeSpeculative(String engineMethod, String routerMethod)
      throws Exception {
    AlignmentSettings settings =
        SETTINGS.withSpeculative(
            ConfigFactory.parseString(
                "kvrouter.models.m.speculative-method = \"" + routerMethod + "\""),
            List.of(MODEL));
    return probe(16, engineMethod, ByteTokenizer::encode, new TrackerRouterKeys(MODEL), settings);
  }

  private static AlignmentProbe.Result probe(
      int engineBlockSize,
      String engineMethod,
      RouterTokenizer tokenizer,
      RouterKeyFunction keys,
      AlignmentSettings settings)
      throws Exception {
    try (SimEngine engine =
        SimEngine.start(
            SimEngineSettings.loopback()
                .withModel(MODEL)
                .withEngine(
                    SimEngineConfig.defaults()
                        .withBlockSize(engineBlockSize)
                        .withSpeculativeMethod(engineMethod)
                        .withTiming(new MockerTimingModel(50))))) {
      ReplicaSpec spec =
          new ReplicaSpec(
              "r",
              0,
              MODEL,
              engine.baseUrl(),
              16,
              engine.kvEventsEndpoint(),
              engine.replayEndpoint(),
              "");
      ReplicaEventPipeline pipeline =
          new ReplicaEventPipeline("r", keys, 16, 100, 1 << 20, b -> {});
      try (KvEventSubscriber sub =
          new KvEventSubscriber(
                  spec.kvEventsEndpoint(), spec.replayEndpoint(), "", pipeline, "probe-test")
              .start()) {
        EngineProbe http = new EngineProbe(spec.baseUrl(), Duration.ofSeconds(5));
        // One completion first, and its batch heard: the subscription is up before the probe.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (int i = 0; pipeline.engineBatches() == 0 && System.nanoTime() < deadline; i++) {
          String warm = "warm up " + i + " ".repeat(40);
          http.complete("{\"prompt\":\"" + warm + "\",\"max_tokens\":1}", Duration.ofSeconds(10))
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS);
          Thread.sleep(100); // polling interval of a bounded wait
        }
        assertThat(pipeline.engineBatches()).as("the subscriber hears the engine").isPositive();
        AlignmentProbe probe = new AlignmentProbe(spec, keys, tokenizer, settings, http);
        return probe.run(pipeline, 42).get(30, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void engineKeyedAsTheRouterKeys_isAligned_withATextPrompt() throws Exception {
    AlignmentProbe.Result r =
        probe(16, ByteTokenizer::encode, new TrackerRouterKeys(MODEL)); // the sim's own tokenizer
    assertThat(r.outcome()).as(r.detail()).isEqualTo(AlignmentProbe.Outcome.ALIGNED);
  }

  @Test
  void withoutARouterTokenizer_theProbeSendsTokenIds_andStillChecksBlockSizeAndKeys()
      throws Exception {
    assertThat(probe(16, null, new TrackerRouterKeys(MODEL)).outcome())
        .isEqualTo(AlignmentProbe.Outcome.ALIGNED);
    AlignmentProbe.Result r = probe(32, null, new TrackerRouterKeys(MODEL));
    assertThat(r.outcome()).isEqualTo(AlignmentProbe.Outcome.BLOCK_SIZE);
  }

  @Test
  void engineWithAnotherBlockSize_isNamedAsABlockSizeMismatch() throws Exception {
    AlignmentProbe.Result r = probe(32, ByteTokenizer::encode, new TrackerRouterKeys(MODEL));
    assertThat(r.outcome()).isEqualTo(AlignmentProbe.Outcome.BLOCK_SIZE);
    assertThat(r.detail()).startsWith("block size").contains("blocks of 32", "blocks of 16");
    assertThat(r.mismatch()).isTrue();
  }

  @Test
  void engineThatTokenizesOtherwise_isNamedAsATokenizerMismatch() throws Exception {
    RouterTokenizer shifted =
        text -> Arrays.stream(ByteTokenizer.encode(text)).map(t -> t + 1).toArray();
    AlignmentProbe.Result r = probe(16, shifted, new TrackerRouterKeys(MODEL));
    assertThat(r.outcome()).isEqualTo(AlignmentProbe.Outcome.TOKENIZER);
    assertThat(r.detail()).startsWith("tokenizer").contains("kvrouter.models.\"m\".tokenizer");
  }

  @Test
  void agentKeyingWithAnotherSeed_isNamedAsAHashSeedMismatch() throws Exception {
    AlignmentProbe.Result r =
        probe(16, ByteTokenizer::encode, new TrackerRouterKeys("another-model"));
    assertThat(r.outcome()).isEqualTo(AlignmentProbe.Outcome.HASH_SEED);
    assertThat(r.detail()).startsWith("hash seed");
  }

  @Test
  void eagleEngine_withTheRoutersSettingNone_isRefused_namingTheSetting() throws Exception {
    AlignmentProbe.Result r = probeSpeculative("eagle", "none");
    assertThat(r.outcome()).as(r.detail()).isEqualTo(AlignmentProbe.Outcome.SPECULATIVE);
    assertThat(r.mismatch()).as("refused under on-mismatch = refuse").isTrue();
    assertThat(r.detail())
        .startsWith("speculative decoding")
        .contains("kvrouter.models.\"m\".speculative-method")
        .contains("eagle");
  }

  @Test
  void plainEngine_withTheRoutersSettingEagle_isRefused_namingTheSetting() throws Exception {
    AlignmentProbe.Result r = probeSpeculative("none", "eagle3");
    assertThat(r.outcome()).as(r.detail()).isEqualTo(AlignmentProbe.Outcome.SPECULATIVE);
    assertThat(r.detail())
        .contains("kvrouter.models.\"m\".speculative-method = eagle3")
        .contains("= none");
  }

  @Test
  void eagleEngine_withTheRoutersSettingEagle_isAligned() throws Exception {
    AlignmentProbe.Result r = probeSpeculative("mtp", "eagle");
    assertThat(r.outcome()).as(r.detail()).isEqualTo(AlignmentProbe.Outcome.ALIGNED);
    assertThat(r.detail()).as("the check was made").isEmpty();
  }
}

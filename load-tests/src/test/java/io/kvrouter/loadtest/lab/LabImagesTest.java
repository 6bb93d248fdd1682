package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.Workloads;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.protocol.keys.ExtraKeys;
import io.kvrouter.protocol.keys.MediaPrompt;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Images in the lab: placeholder tokens after the trace's first block, keyed with the image as the
 * engine and the ingress key them, so the same image shares blocks and different images do not; a
 * router that takes the placeholders for text cannot tell them apart.
 */
@org.junit.jupiter.api.Timeout(300)
class LabImagesTest {

  private static final int T = 256;

  private static Workload trace() {
    return Workloads.bundled(Workloads.MOONCAKE_CONVERSATION, 0L).limit(40);
  }

  private static String[] all(Workload w, String image) {
    String[] out = new String[w.size()];
    Arrays.fill(out, image);
    return out;
  }

  private static PromptKeys keys(Workload w, String[] images) {
    return PromptKeys.compute(w, LabConfig.MODEL, 16, new String[w.size()], images, T);
  }

  @Test
  void imageKeysAreTheIngressKeysOfThePromptWithItsPlaceholders() {
    Workload w = trace();
    String[] images = LabAdapters.images(w, 4, 1.0, 1);
    PromptKeys keys = keys(w, images);
    BlockKeys bk = BlockKeys.of(LabConfig.MODEL, 16);
    for (int i : new int[] {0, 7, 19}) {
      int[] text = w.get(i).promptTokenIds();
      int start = Math.min(text.length, w.blockTokens()) / 16 * 16;
      int[] tokens = new int[text.length + T];
      System.arraycopy(text, 0, tokens, 0, start);
      Arrays.fill(tokens, start, start + T, MediaPrompt.Settings.DEFAULTS.imageTokenId());
      System.arraycopy(text, start, tokens, start + T, text.length - start);
      assertThat(keys.of(i))
          .as("request %d", i)
          .containsExactly(bk.keys(tokens, ExtraKeys.NONE.withMedia(images[i], start, T)));
      assertThat(keys.textOf(i)).containsExactly(bk.keys(text));
      assertThat(keys.imageTokens(i)).isEqualTo(T);
      assertThat(keys.of(i)).hasSize(keys.textOf(i).length + T / 16);
    }
    assertThat(LabAdapters.images(w, 0, 1.0, 1)).containsOnlyNulls();
  }

  @Test
  void sameImageSharesItsBlocks_anotherImageOnlyThoseBeforeIt() {
    Workload w = trace();
    int i = 5;
    int before = w.blockTokens() / 16;
    long[] one = keys(w, all(w, "image-1")).of(i);
    long[] again = keys(w, all(w, "image-1")).of(i);
    long[] two = keys(w, all(w, "image-2")).of(i);
    assertThat(one).containsExactly(again);
    assertThat(Arrays.copyOf(two, before)).containsExactly(Arrays.copyOf(one, before));
    for (int b = before; b < one.length; b++) {
      assertThat(two[b]).as("block %d", b).isNotEqualTo(one[b]);
    }

    // On one engine: the second request with the same image hits all its full blocks (the engine
    // computes at least the last prompt token); with another image only the blocks before it.
    int length = w.get(i).inputLength() + T;
    assertThat(hitsAfter(one, one, length)).isEqualTo(Math.min(one.length, (length - 1) / 16));
    assertThat(hitsAfter(one, two, length)).isEqualTo(before);
  }

  /** Blocks the engine hits for {@code second} after serving {@code first}. */
  private static long hitsAfter(long[] first, long[] second, int promptLength) {
    LabEngine engine =
        new LabEngine(
            0,
            "r0",
            16,
            1 << 16,
            256,
            1 << 16,
            0,
            0,
            new LabEngine.Listener() {
              @Override
              public void firstToken(LabEngine e, LabSequence s, long t) {}

              @Override
              public void finished(LabEngine e, LabSequence s, long t) {}
            });
    long now = 0;
    engine.submit(new LabSequence(0, "a", 0, first, promptLength, 1, now));
    now = engine.startPass(now);
    engine.completePass();
    long hits = engine.prefixHits();
    engine.submit(new LabSequence(1, "b", 0, second, promptLength, 1, now));
    engine.startPass(now);
    engine.completePass();
    return (engine.prefixHits() - hits) / 16;
  }

  /**
   * What the routers see: kvrouter, Dynamo, llm-d and TGI get the image-keyed blocks; the text-only
   * peers get the prompt without its image, the same whichever image it shows.
   */
  @Test
  void textOnlyRoutersCannotTellImagesApart() {
    Workload w = trace();
    PromptKeys one = keys(w, all(w, "image-1"));
    PromptKeys two = keys(w, all(w, "image-2"));
    assertThat(two.textOf(9)).containsExactly(one.textOf(9));
    assertThat(two.of(9)).isNotEqualTo(one.of(9));
    assertThat(List.of("kvrouter", "dynamo_kv", "llmd_precise", "tgi_trie"))
        .allMatch(LabSimulation::seesImages);
    assertThat(List.of("sglang_cache_aware", "preble_e2", "chwbl"))
        .noneMatch(LabSimulation::seesImages);
    LabConfig config = LabConfig.defaults(2).withImages(2, 1.0, T);
    assertThat(new LabSimulation(w, two, config, "kvrouter").routerKeys(9)).isSameAs(two.of(9));
    assertThat(new LabSimulation(w, two, config, "dynamo_kv").routerKeys(9)).isSameAs(two.of(9));
    assertThat(new LabSimulation(w, two, config, "llmd_precise").routerKeys(9)).isSameAs(two.of(9));
    assertThat(new LabSimulation(w, two, config, "sglang_cache_aware").routerKeys(9))
        .isSameAs(two.textOf(9));
  }

  @Test
  void aRunWithImagesCountsTheirTokens_andSaysWhoSeesThem() {
    LabConfig config =
        LabConfig.defaults(4)
            .withPolicies(List.of("kvrouter", "sglang_cache_aware"))
            .withImages(8, 1.0, T);
    LabResults r = PolicyLab.run(trace(), config, 2, "kvrouter lab --test");
    assertThat(r.policies()).allMatch(p -> p.completed() == 40);
    assertThat(LabReport.render(r, List.of())).contains("Images: 8 (Zipf 1.00), 256 placeholder");
  }

  @Test
  void imagesNeedATrace() {
    Workload w =
        Workloads.byName(
            "sglang-gsp",
            Map.of("groups", "2", "promptsPerGroup", "2", "systemTokens", "16", "qps", "40"),
            5);
    assertThatThrownBy(() -> keys(w, all(w, "image-1")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("trace");
  }
}

package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.Workloads;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.protocol.keys.ExtraKeys;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * LoRA adapters in the lab: assigned per conversation with Zipf popularity, keyed into every block,
 * loaded by the engines at a cost, and steered to their holders by kvrouter's ingress rule.
 */
@org.junit.jupiter.api.Timeout(300)
class LabAdaptersTest {

  /** 24 groups of 8 prompts sharing only 16 tokens: the cache hardly binds a group anywhere. */
  private static Workload groups() {
    return Workloads.byName(
        "sglang-gsp",
        Map.of(
            "groups", "24",
            "promptsPerGroup", "8",
            "systemTokens", "16",
            "questionTokens", "512",
            "outputTokens", "16",
            "qps", "40"),
        5);
  }

  @Test
  void oneAdapterPerConversation_zipfPopular_andKeyedIntoEveryBlock() {
    Workload w = groups();
    String[] adapters = LabAdapters.assign(w, 6, 1.0, 1);
    Map<String, String> bySession = new HashMap<>();
    Map<String, Integer> uses = new HashMap<>();
    for (int i = 0; i < w.size(); i++) {
      String before = bySession.putIfAbsent(w.get(i).session(), adapters[i]);
      assertThat(before == null || before.equals(adapters[i])).as("request %d", i).isTrue();
      uses.merge(adapters[i], 1, Integer::sum);
    }
    assertThat(uses.getOrDefault("adapter-1", 0)).isGreaterThan(uses.getOrDefault("adapter-6", 0));
    assertThat(LabAdapters.assign(w, 0, 1.0, 1)).containsOnlyNulls();

    PromptKeys keys = PromptKeys.compute(w, LabConfig.MODEL, 16, adapters);
    BlockKeys bk = BlockKeys.of(LabConfig.MODEL, 16);
    int[] tokens = w.get(3).promptTokenIds();
    assertThat(keys.of(3)).containsExactly(bk.keys(tokens, ExtraKeys.of(adapters[3], null)));
    assertThat(keys.of(3)[0]).isNotEqualTo(bk.keys(tokens)[0]);
    assertThat(keys.adapter(3)).isEqualTo(adapters[3]);
  }

  @Test
  void aTraceIsKeyedWithItsAdaptersToo() {
    Workload w = Workloads.bundled(Workloads.MOONCAKE_CONVERSATION, 0L).limit(20);
    String[] adapters = LabAdapters.assign(w, 4, 1.0, 1);
    PromptKeys keys = PromptKeys.compute(w, LabConfig.MODEL, 16, adapters);
    BlockKeys bk = BlockKeys.of(LabConfig.MODEL, 16);
    for (int i : new int[] {0, 7, 19}) {
      assertThat(keys.of(i))
          .containsExactly(bk.keys(w.get(i).promptTokenIds(), ExtraKeys.of(adapters[i], null)));
    }
  }

  @Test
  void anEngineLoadsAnAdapterItLacks_chargingTheLoad_andEvictsTheLeastRecentlyUsed() {
    LabEngine engine =
        new LabEngine(
                0,
                "r0",
                16,
                1024,
                256,
                8192,
                0,
                0,
                new LabEngine.Listener() {
                  @Override
                  public void firstToken(LabEngine e, LabSequence s, long t) {}

                  @Override
                  public void finished(LabEngine e, LabSequence s, long t) {}
                })
            .withAdapters(2, 50_000);
    long[] passes = new long[4];
    String[] names = {"a", "a", "b", "c"};
    long now = 0;
    for (int i = 0; i < names.length; i++) {
      LabSequence s = new LabSequence(i, "q" + i, 0, new long[] {100 + i}, 17, 1, now);
      s.adapter = names[i];
      engine.submit(s);
      long start = now;
      now = engine.startPass(now);
      engine.completePass();
      passes[i] = now - start;
    }
    // Same one-token-output prompt each time: only the adapter load differs.
    assertThat(passes[0] - passes[1]).isEqualTo(50_000);
    assertThat(passes[2] - passes[1]).isEqualTo(50_000);
    assertThat(engine.adapterLoads()).isEqualTo(3);
    assertThat(engine.holdsAdapter("a")).isFalse();
    assertThat(engine.holdsAdapter("b")).isTrue();
    assertThat(engine.holdsAdapter("c")).isTrue();
  }

  /**
   * Where the cache does not tell replicas apart (16 shared tokens), only the ingress's adapter
   * steering keeps a conversation's adapter where it is loaded: kvrouter loads adapters far less
   * often than round robin.
   */
  @Test
  void kvroutersAdapterSteering_loadsFarFewerAdaptersThanRoundRobin() {
    LabConfig config =
        LabConfig.defaults(4)
            .withPolicies(List.of("kvrouter", "round_robin"))
            .withAdapters(12, 1.0, 3, 86_000);
    LabResults r = PolicyLab.run(groups(), config, 2, "kvrouter lab --test");
    long kvrouter = r.policies().get(0).adapterLoads();
    long roundRobin = r.policies().get(1).adapterLoads();
    assertThat(kvrouter).isPositive();
    assertThat(kvrouter * 3).isLessThan(roundRobin);
    assertThat(LabReport.render(r, List.of()))
        .contains("| policy | adapter loads |\n|---|---:|\n| kvrouter | " + kvrouter + " |\n");
  }
}

package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.Workloads;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The disaggregated lab on small workloads: every scheme decodes every request, the peers that
 * always disaggregate do, and kvrouter's skip rule keeps continued conversations on the decode
 * replica that holds them. Guarded by a generous timeout: a replay that never ends is a bug.
 */
@org.junit.jupiter.api.Timeout(300)
class PdLabSimulationTest {

  /**
   * 16 chats of 4 turns: each turn's prompt is the previous turns plus a 64-token answer and 64 new
   * user tokens (the lab caches prompt blocks only, so a turn's uncached part on the replica that
   * decoded the last is 128 tokens and a partial block).
   */
  private static Workload chats() {
    return Workloads.byName(
        "multi-turn-chat",
        Map.of(
            "sessions",
            "16",
            "turns",
            "4",
            "userTokens",
            "64",
            "answerTokens",
            "64",
            "thinkSeconds",
            "1"),
        3);
  }

  /** 16 groups of 16 prompts sharing a 2,048-token system prompt, all at once. */
  private static Workload burst() {
    return Workloads.byName("sglang-gsp", Map.of("groups", "16"), 1);
  }

  private static final PdLabSimulation.Cluster TWO_BY_TWO =
      new PdLabSimulation.Cluster(2, 2, 1, 131_072, 25e9);

  private static PdLabSimulation.Result run(
      Workload w, PdLabSimulation.Cluster cluster, PdScheme scheme) {
    return PdLab.run(w, LabConfig.defaults(4), cluster, List.of(scheme), 1).get(0);
  }

  @Test
  void everySchemeDecodesEveryRequestToItsLastToken() {
    Workload w = chats();
    for (PdLabSimulation.Result r :
        PdLab.run(w, LabConfig.defaults(4), TWO_BY_TWO, PdScheme.all(), 2)) {
      assertThat(r.completed()).as(r.scheme()).isEqualTo(w.size());
      assertThat(r.ttft().p50()).as(r.scheme()).isPositive();
      assertThat(r.tpot().p50()).as(r.scheme()).isPositive();
    }
  }

  @Test
  void peersWithoutASkipRuleDisaggregateEveryRequestAndMoveItsKv() {
    Workload w = chats();
    for (PdScheme s : List.of(PdScheme.dynamo(), PdScheme.llmd(), PdScheme.vllmProxy())) {
      PdLabSimulation.Result r = run(w, TWO_BY_TWO, s);
      assertThat(r.disaggregated()).as(s.name()).isEqualTo(1.0);
      assertThat(r.transferredGb()).as(s.name()).isPositive();
    }
  }

  /**
   * kvrouter places a chat on the decode replica that holds its shared system prompt and earlier
   * turns, so its prompt is mostly cached there and skips the prefill hop (in this seeded run only
   * the very first request takes it: 1 of 64); Dynamo prefills everything and chooses the decode
   * worker by load alone (overlap weight 0), so it moves more KV and its decode pool hits less of
   * its own cache (0.85 against 0.90 in this run).
   */
  @Test
  void kvrouterSkipsThePrefillHopForPromptsMostlyCachedOnTheirDecodeReplica() {
    Workload w = chats();
    PdLabSimulation.Result kv = run(w, TWO_BY_TWO, PdScheme.kvrouter());
    PdLabSimulation.Result dynamo = run(w, TWO_BY_TWO, PdScheme.dynamo());
    assertThat(kv.disaggregated()).isLessThan(0.5);
    assertThat(kv.decodeHitRate()).isGreaterThan(dynamo.decodeHitRate());
    assertThat(kv.transferredGb()).isLessThan(dynamo.transferredGb());
  }

  /**
   * A burst of 256 prompts on one decode engine with four ranks: kvrouter routes to ranks, which
   * share the decode work evenly (max over mean 1.03 in this seeded run; 4.0 if every request went
   * to one rank).
   */
  @Test
  void dataParallelRanksEachServeAShareOfTheDecodeWork() {
    PdLabSimulation.Result r =
        run(burst(), new PdLabSimulation.Cluster(1, 1, 4, 131_072, 25e9), PdScheme.kvrouter());
    assertThat(r.completed()).isEqualTo(burst().size());
    assertThat(r.rankImbalance()).as("max over mean of four ranks' prompt tokens").isLessThan(1.5);
  }
}

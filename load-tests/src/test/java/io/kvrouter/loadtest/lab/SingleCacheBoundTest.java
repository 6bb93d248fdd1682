package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvrouter.loadtest.workload.PromptTokens;
import io.kvrouter.loadtest.workload.TokenExpander;
import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.WorkloadRequest;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The pooled bound: one LRU cache of every replica's capacity. Two conversations open with 64
 * blocks each, then the first one's next turn comes back. Two replicas of 50 blocks pool to 100, so
 * the second opening pushes out 28 blocks of the first, its tail first, and the next turn finds 36
 * of its 64; unlimited it finds all 64.
 */
class SingleCacheBoundTest {

  private static final int OPENING = 1_024;

  private static Workload fourOpeningsThenANextTurn() {
    TokenExpander e = new TokenExpander(3);
    PromptTokens a = PromptTokens.empty(e).extend(11, OPENING);
    List<WorkloadRequest> requests = new java.util.ArrayList<>();
    requests.add(new WorkloadRequest(0, 0, "a", 0, a, 16, null));
    for (int i = 1; i < 4; i++) {
      PromptTokens other = PromptTokens.empty(e).extend(11 + i, OPENING);
      requests.add(new WorkloadRequest(i, i * 1_000_000L, "s" + i, 0, other, 16, null));
    }
    requests.add(new WorkloadRequest(4, 4_000_000, "a", 1, a.extend(21, 200), 16, null));
    return Workload.of("four-openings-then-a-next-turn", 3, 0, requests);
  }

  @Test
  void thePooledCacheEvictsByRecency_tailsFirst_andTheReportSaysWhatItHolds() {
    LabConfig config = LabConfig.defaults(2).withCapacity(100).withPolicies(List.of("round_robin"));
    LabResults r = PolicyLab.run(fourOpeningsThenANextTurn(), config, 1, "t");
    double prompts = 5 * OPENING + 200;

    assertThat(r.bound().pooledBlocks()).isEqualTo(200);
    assertThat(r.bound().tokenRate()).isCloseTo(64 * 16 / prompts, within(1e-9));
    assertThat(r.bound().pooledTokenRate()).isCloseTo(8 * 16 / prompts, within(1e-9));
    assertThat(LabReport.render(r, List.of())).contains("(200 blocks)").contains("hit rate 0.0241");
    assertThat(ResultsJson.toTree(r).get("pooled_lru_hit_rate").asDouble())
        .isEqualTo(r.bound().pooledTokenRate());
  }

  @Test
  void unlimitedEngines_poolNothing_andTheBoundIsTheUnlimitedOne() {
    LabConfig config = LabConfig.defaults(2).withPolicies(List.of("round_robin"));
    LabResults r = PolicyLab.run(fourOpeningsThenANextTurn(), config, 1, "t");

    assertThat(r.bound().pooledBlocks()).isZero();
    assertThat(r.bound().pooledTokenRate()).isEqualTo(r.bound().tokenRate());
    assertThat(LabReport.render(r, List.of())).doesNotContain("One LRU cache");
    assertThat(ResultsJson.toTree(r).has("pooled_lru_hit_rate")).isFalse();
  }
}

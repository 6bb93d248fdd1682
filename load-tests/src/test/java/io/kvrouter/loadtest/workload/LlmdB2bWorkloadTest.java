package io.kvrouter.loadtest.workload;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class LlmdB2bWorkloadTest {

  @Test
  void prompts_are150GroupsOf5_each6000SharedPlus1200Tokens_with1000Output() {
    Workload b2b = Workloads.byName("llmd-b2b", Map.of("stages", "15:50"), 5);
    assertThat(b2b.requests())
        .allSatisfy(
            r -> {
              assertThat(r.inputLength()).isEqualTo(7200);
              assertThat(r.outputLength()).isEqualTo(1000);
            });
    // the first pass of 750 arrivals sends every prompt exactly once
    assertThat(b2b.size()).isGreaterThanOrEqualTo(750);
    Set<PromptTokens> firstPass =
        b2b.requests().subList(0, 750).stream()
            .map(WorkloadRequest::prompt)
            .collect(Collectors.toSet());
    assertThat(firstPass).hasSize(750);
    assertThat(firstPass.stream().map(p -> p.segmentKey(0)).distinct().count()).isEqualTo(150);
    WorkloadRequest a = b2b.get(0);
    WorkloadRequest sameGroup =
        b2b.stream()
            .filter(r -> r.session().equals(a.session()) && r.prompt() != a.prompt())
            .findFirst()
            .orElseThrow();
    int[] ta = a.promptTokenIds();
    int[] tb = sameGroup.promptTokenIds();
    assertThat(Arrays.copyOf(tb, 6000)).containsExactly(Arrays.copyOf(ta, 6000));
    assertThat(tb[6000]).isNotEqualTo(ta[6000]);
  }

  @Test
  void defaultStages_stepFrom3To60Qps_afterAWarmup() {
    assertThat(LlmdB2bWorkload.DEFAULT_STAGES.get(0)).isEqualTo(new RateStage(15, 50));
    assertThat(LlmdB2bWorkload.DEFAULT_STAGES.get(1).qps()).isEqualTo(3);
    assertThat(LlmdB2bWorkload.DEFAULT_STAGES.get(LlmdB2bWorkload.DEFAULT_STAGES.size() - 1).qps())
        .isEqualTo(60);
  }

  @Test
  void arrivalsPerStage_followTheStageRate() {
    Workload w = Workloads.byName("llmd-b2b", Map.of("stages", "3:100,60:10"), 9);
    long slow = w.stream().filter(r -> r.arrivalMicros() < 100_000_000L).count();
    long fast = w.size() - slow;
    assertThat(slow).isBetween(300L - 5 * 17, 300L + 5 * 17); // Poisson(300), five sigmas
    assertThat(fast).isBetween(600L - 5 * 25, 600L + 5 * 25);
    assertThat(w.durationMicros()).isLessThan(110_000_000L);
  }

  @Test
  void durationScale_shortensTheRunProportionally() {
    Workload full = Workloads.byName("llmd-b2b", Map.of(), 2);
    Workload tenth = Workloads.byName("llmd-b2b", Map.of("durationScale", "0.1"), 2);
    // the guide's stages add up to 502 s; the last arrival falls within the last second
    assertThat(full.durationMicros() / 1e6).isBetween(501.0, 502.0);
    assertThat(tenth.durationMicros() / 1e6).isBetween(50.1, 50.2);
    assertThat((double) tenth.size() / full.size()).isBetween(0.08, 0.12);
  }

  @Test
  void sameSeed_givesTheSameArrivalsAndPrompts() {
    Workload a = Workloads.byName("llmd-b2b", Map.of("durationScale", "0.05"), 3);
    Workload b = Workloads.byName("llmd-b2b", Map.of("durationScale", "0.05"), 3);
    assertThat(b.size()).isEqualTo(a.size());
    for (int i = 0; i < a.size(); i++) {
      assertThat(b.get(i).arrivalMicros()).isEqualTo(a.get(i).arrivalMicros());
      assertThat(b.get(i).prompt().segmentKey(1)).isEqualTo(a.get(i).prompt().segmentKey(1));
    }
  }
}

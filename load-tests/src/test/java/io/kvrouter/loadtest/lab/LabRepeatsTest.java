package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.Workloads;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@org.junit.jupiter.api.Timeout(300)
class LabRepeatsTest {

  private static final LabConfig CONFIG = LabConfig.defaults(4);

  private static PolicyResult result(
      String policy, double p90, double hit, double loadMaxOverMean) {
    return new PolicyResult(
        policy,
        hit,
        0,
        0,
        null,
        new Latency(0, p90, 0, 0),
        new Latency(0, 0, 0, 0),
        0,
        loadMaxOverMean,
        0,
        0,
        new long[0],
        new long[0],
        0,
        new double[0],
        List.of(),
        new double[0],
        0,
        0,
        null,
        null);
  }

  private static LabRepeats.Run run(long seed, PolicyResult... policies) {
    return new LabRepeats.Run(
        seed, new LabResults("w", 10, CONFIG, null, List.of(policies), "kvrouter lab --test", 0));
  }

  /**
   * Two policies over three runs: means, sample deviations and ranges are the runs' own; a run
   * counts as led on p90 only with no lower p90 elsewhere (a tie leads both), and a hit rate counts
   * as level within 0.005 of the run's highest, not beyond.
   */
  @Test
  void summary_isEachPolicysStatisticsOverTheRuns_andTheRunsItLed() {
    List<LabRepeats.Run> runs =
        List.of(
            run(1, result("a", 500, 0.540, 1.0), result("b", 520, 0.550, 1.2)),
            run(2, result("a", 510, 0.545, 1.1), result("b", 510, 0.549, 1.2)),
            run(3, result("a", 530, 0.5449, 1.2), result("b", 525, 0.550, 1.2)));

    List<LabRepeats.Row> rows = LabRepeats.summarise(runs);

    assertThat(rows).extracting(LabRepeats.Row::policy).containsExactly("a", "b");
    LabRepeats.Row a = rows.get(0);
    assertThat(a.p90().mean()).isCloseTo(513.333, within(1e-3));
    assertThat(a.p90().sd()).isCloseTo(15.275, within(1e-3));
    assertThat(a.p90().min()).isEqualTo(500);
    assertThat(a.p90().max()).isEqualTo(530);
    assertThat(a.hit().mean()).isCloseTo(0.54330, within(1e-5));
    assertThat(a.loadMaxOverMean().mean()).isCloseTo(1.1, within(1e-9));
    assertThat(a.lowestP90()).isEqualTo(2);
    assertThat(a.hitLevel()).isEqualTo(1);
    LabRepeats.Row b = rows.get(1);
    assertThat(b.lowestP90()).isEqualTo(2);
    assertThat(b.hitLevel()).isEqualTo(3);
    assertThat(b.hit().sd()).isCloseTo(0.000577, within(1e-6));
    assertThat(LabRepeats.Stats.of(new double[] {7}).sd()).isZero();

    String report = LabRepeats.render(runs, "kvrouter lab --test");
    assertThat(report)
        .contains("| a | 513.3 ± 15.3 | 500.0-530.0 | 0.5433 ± 0.0029 |")
        .contains("| 2/3 | 1/3 |")
        .contains("| 3 | 530.0 / 0.5449 | 525.0 / 0.5500 |");
  }

  /** Each run draws its workload and its policies' randomness from its own seed, in order. */
  @Test
  void repeats_runTheLabOncePerSeed_andWriteTheReportAndEachRunsResults(@TempDir Path out)
      throws Exception {
    Workload base = Workloads.bundled(Workloads.MOONCAKE_SYNTHETIC, 0L).limit(60);
    List<Long> drawn = new ArrayList<>();
    LabConfig config =
        LabConfig.defaults(4).withPolicies(List.of("kvrouter", "round_robin")).withSeed(5);

    List<LabRepeats.Run> runs =
        LabRepeats.run(
            s -> {
              drawn.add(s);
              return base.jitter(s, 2_000);
            },
            config,
            3,
            2,
            "kvrouter lab --test");

    assertThat(drawn).containsExactly(5L, 6L, 7L);
    assertThat(runs).extracting(LabRepeats.Run::seed).containsExactly(5L, 6L, 7L);
    assertThat(runs).extracting(r -> r.results().config().seed()).containsExactly(5L, 6L, 7L);
    assertThat(runs.get(0).results().policies()).hasSize(2);
    LabRepeats.write(runs, "kvrouter lab --test", out);
    assertThat(Files.readString(out.resolve("repeats.md"))).contains("3 runs (seeds 5-7)");
    for (long s = 5; s <= 7; s++) {
      assertThat(Files.size(out.resolve("seed-" + s).resolve("results.json"))).isPositive();
    }
  }
}

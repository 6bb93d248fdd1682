package io.kvrouter.loadtest.workload;

import java.util.List;
import java.util.SplittableRandom;

/**
 * Arrival times of an open-loop Poisson process, constant-rate or stepped through {@link
 * RateStage}s (the load shape of llm-d's inference-perf benchmarks).
 *
 * <p>Contract: deterministic for a given seed; arrivals are non-decreasing; within a stage the
 * inter-arrival gaps are exponential with mean {@code 1/qps}; a stage's process restarts at the
 * stage boundary (memorylessness makes that exact). Cost: O(arrivals), no state kept.
 */
public final class PoissonArrivals {

  private PoissonArrivals() {}

  /**
   * {@code count} arrivals (microseconds) at a constant {@code qps}; all at 0 if {@code qps} is
   * infinite.
   */
  public static long[] constantRate(int count, double qps, SplittableRandom random) {
    if (!(qps > 0)) {
      throw new IllegalArgumentException(
          "qps must be positive (or infinite for all-at-once), got " + qps);
    }
    long[] out = new long[count];
    if (Double.isInfinite(qps)) {
      return out;
    }
    double t = 0;
    for (int i = 0; i < count; i++) {
      t += exponential(random, qps);
      out[i] = (long) (t * 1e6);
    }
    return out;
  }

  /** All arrivals (microseconds) of the stepped schedule, stage after stage. */
  public static long[] staged(List<RateStage> stages, SplittableRandom random) {
    long[] out = new long[64];
    int n = 0;
    double stageStart = 0;
    for (RateStage stage : stages) {
      double end = stageStart + stage.seconds();
      double t = stageStart + exponential(random, stage.qps());
      while (t < end) {
        if (n == out.length) {
          out = java.util.Arrays.copyOf(out, n * 2);
        }
        out[n++] = (long) (t * 1e6);
        t += exponential(random, stage.qps());
      }
      stageStart = end;
    }
    return java.util.Arrays.copyOf(out, n);
  }

  /** An exponential variate with the given rate (mean {@code 1/rate}). */
  static double exponential(SplittableRandom random, double rate) {
    return -Math.log(1.0 - random.nextDouble()) / rate;
  }
}

package io.kvrouter.loadtest.bench;

import java.util.SplittableRandom;

/**
 * Open-loop send times for synthetic workloads: each call yields the next intended offset in
 * nanoseconds from the start of the run, non-decreasing.
 *
 * <p>Implementations are stateful and single-threaded (the source that owns one calls it from the
 * runner's scheduling thread). Cost: O(1) per call.
 */
public interface ArrivalSchedule {

  /** The next intended send offset, nanoseconds. */
  long nextOffsetNanos();

  /**
   * A Poisson process: exponential gaps with mean {@code 1/ratePerSecond}, deterministic for a
   * seed; the first request arrives after one gap, not at zero.
   */
  static ArrivalSchedule poisson(double ratePerSecond, long seed) {
    if (!(ratePerSecond > 0) || Double.isInfinite(ratePerSecond)) {
      throw new IllegalArgumentException("rate must be positive and finite, got " + ratePerSecond);
    }
    SplittableRandom random = new SplittableRandom(seed);
    return new ArrivalSchedule() {
      private double seconds;

      @Override
      public long nextOffsetNanos() {
        // Inverse-CDF sampling of Exp(rate); 1 - u lies in (0, 1], so the log is finite.
        seconds += -Math.log(1.0 - random.nextDouble()) / ratePerSecond;
        return (long) (seconds * 1e9);
      }
    };
  }

  /**
   * Bursts: {@code size} requests at the same instant, the next burst {@code intervalNanos} later;
   * the first burst is at zero. This is the herding scenario: many requests with the same prefix
   * arrive before any of them has filled a cache.
   */
  static ArrivalSchedule bursts(int size, long intervalNanos) {
    if (size < 1 || intervalNanos < 0) {
      throw new IllegalArgumentException(
          "burst size must be >= 1 and interval >= 0, got " + size + " and " + intervalNanos);
    }
    return new ArrivalSchedule() {
      private long issued;

      @Override
      public long nextOffsetNanos() {
        long burst = issued++ / size;
        return burst * intervalNanos;
      }
    };
  }
}

package io.kvrouter.tracker.policy;

import java.util.Arrays;

/**
 * One value per replica that halves every {@code halfLifeMillis} after it was last set: the tokens
 * recently written to a replica ({@link WritePressure}), how late its first tokens have been
 * ({@link ReplicaLag}).
 *
 * <p>Cost: O(1) per call; the arrays grow with the largest replica index. Not thread-safe: owned by
 * one policy instance.
 */
final class FadingValues {

  private final double halfLifeMillis;
  private double[] values = new double[16];
  private long[] at = new long[16];

  /**
   * @param halfLifeMillis above 0
   */
  FadingValues(double halfLifeMillis) {
    this.halfLifeMillis = halfLifeMillis;
  }

  /** The value of {@code replica} faded to {@code now}; 0 for a replica never set. */
  double at(int replica, long now) {
    if (replica < 0 || replica >= values.length) {
      return 0;
    }
    long elapsed = Math.max(0, now - at[replica]);
    return values[replica] * Math.pow(0.5, elapsed / halfLifeMillis);
  }

  /** The value of {@code replica} as last set, before fading: the most it can be now. */
  double last(int replica) {
    return replica < 0 || replica >= values.length ? 0 : values[replica];
  }

  /** Sets the value of {@code replica} to {@code value} at {@code now}. */
  void set(int replica, double value, long now) {
    if (replica >= values.length) {
      int n = Math.max(replica + 1, values.length * 2);
      values = Arrays.copyOf(values, n);
      at = Arrays.copyOf(at, n);
    }
    values[replica] = value;
    at[replica] = now;
  }

  /** The replica left: its value is 0. */
  void forget(int replica) {
    if (replica >= 0 && replica < values.length) {
      values[replica] = 0;
    }
  }
}

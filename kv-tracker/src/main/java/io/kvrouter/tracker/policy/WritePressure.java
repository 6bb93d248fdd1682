package io.kvrouter.tracker.policy;

import java.util.Arrays;

/**
 * Uncached prompt tokens recently written to each replica, by this router and (from the reservation
 * plane) its peers, decayed with a one-minute half-life: the key of {@link TtftPolicy}'s shared
 * near-tie order (every router sees the same reservations, so the same pressure) and the measure of
 * a replica's share of the recent work ({@link #shares}).
 *
 * <p>Cost: O(1) per update and read, O(n) per {@link #shares}. Not thread-safe: owned by one policy
 * instance.
 */
final class WritePressure {

  /** Half-life of the recently written tokens. */
  static final long HALF_LIFE_MILLIS = 60_000;

  private double[] tokens = new double[16];
  private long[] at = new long[16];

  /** Tokens recently written to {@code replica}, decayed to {@code now}. */
  double at(int replica, long now) {
    if (replica >= tokens.length) {
      return 0;
    }
    long elapsed = Math.max(0, now - at[replica]);
    return tokens[replica] * Math.pow(0.5, elapsed / (double) HALF_LIFE_MILLIS);
  }

  /** Records {@code written} tokens written to {@code replica} at {@code now}. */
  void add(int replica, double written, long now) {
    if (replica >= tokens.length) {
      int n = Math.max(replica + 1, tokens.length * 2);
      tokens = Arrays.copyOf(tokens, n);
      at = Arrays.copyOf(at, n);
    }
    tokens[replica] = at(replica, now) + written;
    at[replica] = now;
  }

  /**
   * Per candidate, its recently written tokens over the candidates' mean, to the power {@code
   * exponent}, at most 1 (a replica written less than the mean has fewer later requests for a new
   * request's compute to delay); 1 for every candidate when the exponent is 0, or nothing was
   * written anywhere.
   */
  double[] shares(int[] candidates, long now, double exponent) {
    int n = candidates.length;
    double[] share = new double[n];
    Arrays.fill(share, 1.0);
    if (exponent == 0) {
      return share;
    }
    double sum = 0;
    for (int i = 0; i < n; i++) {
      share[i] = at(candidates[i], now);
      sum += share[i];
    }
    // A floor of a thousandth of the mean (at least 0.001 token) keeps an unwritten replica's
    // share finite and makes all shares 1 when nothing was written.
    double floor = Math.max(1.0, sum / n) * 1e-3;
    double mean = sum / n + floor;
    for (int i = 0; i < n; i++) {
      share[i] = Math.min(1.0, Math.pow((share[i] + floor) / mean, exponent));
    }
    return share;
  }
}

package io.kvrouter.tracker.policy;

import java.util.Arrays;

/**
 * Uncached prompt tokens recently written to each replica, by this router and (from the reservation
 * plane) its peers, decayed with a one-minute half-life: the key of {@link KvRouterPolicy}'s shared
 * near-tie order (every router sees the same reservations, so the same pressure) and the measure of
 * a replica's share of the recent work ({@link #shares}).
 *
 * <p>Cost: O(1) per update and read, O(n) per {@link #shares}. Not thread-safe: owned by one policy
 * instance.
 */
final class WritePressure {

  /** Half-life of the recently written tokens. */
  static final long HALF_LIFE_MILLIS = 60_000;

  private final FadingValues tokens;

  /** With the one-minute half-life. */
  WritePressure() {
    this(HALF_LIFE_MILLIS);
  }

  /**
   * @param halfLifeMillis above 0
   */
  WritePressure(double halfLifeMillis) {
    this.tokens = new FadingValues(halfLifeMillis);
  }

  /** Tokens recently written to {@code replica}, decayed to {@code now}. */
  double at(int replica, long now) {
    return tokens.at(replica, now);
  }

  /** Records {@code written} tokens written to {@code replica} at {@code now}. */
  void add(int replica, double written, long now) {
    tokens.set(replica, tokens.at(replica, now) + written, now);
  }

  /**
   * Per candidate, its recently written tokens over the candidates' mean, to the power {@code
   * exponent}, at most {@code max} (a replica written less than the mean has fewer later requests
   * for a new request's compute to delay, one written more has more); 1 for every candidate when
   * the exponent is 0, or nothing was written anywhere.
   */
  double[] shares(int[] candidates, long now, double exponent, double max) {
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
      share[i] = Math.min(max, Math.pow((share[i] + floor) / mean, exponent));
    }
    return share;
  }
}

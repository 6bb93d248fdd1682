package io.kvrouter.tracker.policy;

/**
 * The queueing a replica's recent work rate makes its later requests meet, the charge {@link
 * CostModel} puts on a request that opens a session ({@code cost.session-excess}): a session's
 * opening commits its later turns to the replica, and where prompts are cached on few replicas each
 * (many system prompts over many replicas) the openings of a popular prompt pile onto its holders
 * while the queue any one decision sees stays short. Per candidate {@code r}:
 *
 * <pre>
 *   w_r      = uncached tokens written to r by every router, faded with half-life h
 *   excess_r = max(0, w_r − mean of w over the candidates)
 *   done_r   = w_r less the prefill still queued on r (priced as the queue: a burst is not a rate)
 *   ρ_r      = min(0.9, perKiloToken · done_r / 1000 · ln 2 / h)  (share of the time r computed)
 *   charge_r = perKiloToken · excess_r / 1000 · ρ_r / (1 − ρ_r)
 * </pre>
 *
 * that is the compute r took on beyond the mean, times M/M/1's waiting per unit of work at r's
 * utilisation. It vanishes on an idle cluster (ρ near 0: nothing waits, a cached prefix stays where
 * it is) and on a balanced one (no excess), and grows as the square of an over-fed replica's rate,
 * so an opening leaves its prompt's holders for a replica that must compute the prompt only when
 * the holders are both busier than the rest and busy. ({@code faded sum · ln 2 / h} is the rate of
 * a steady stream of writes.)
 *
 * <p>Cost: O(n) per {@link #charges}. Not thread-safe: owned by one policy instance.
 */
final class RecentWork {

  /** The highest utilisation believed: above it the queueing factor would run to infinity. */
  private static final double MAX_RHO = 0.9;

  private final double halfLifeMillis;
  private final WritePressure written;

  /**
   * @param halfLifeMillis above 0
   */
  RecentWork(double halfLifeMillis) {
    this.halfLifeMillis = halfLifeMillis;
    this.written = new WritePressure(halfLifeMillis);
  }

  /** Records {@code tokens} uncached tokens written to {@code replica} at {@code now}. */
  void add(int replica, double tokens, long now) {
    written.add(replica, tokens, now);
  }

  /**
   * Per candidate, the charge in ms (see the class comment), with timing {@code t} and {@code
   * queued} prefill tokens not yet computed on each candidate.
   */
  double[] charges(EngineTiming t, int[] candidates, double[] queued, long now) {
    int n = candidates.length;
    double[] written = new double[n];
    double sum = 0;
    for (int i = 0; i < n; i++) {
      written[i] = this.written.at(candidates[i], now);
      sum += written[i];
    }
    double mean = n == 0 ? 0 : sum / n;
    double perToken = t.perKiloToken() / 1e3;
    double[] charge = new double[n];
    for (int i = 0; i < n; i++) {
      if (written[i] > mean) {
        double done = Math.max(0, written[i] - queued[i]);
        double rho = Math.min(MAX_RHO, perToken * done * Math.log(2) / halfLifeMillis);
        charge[i] = perToken * (written[i] - mean) * rho / (1 - rho);
      }
    }
    return charge;
  }
}

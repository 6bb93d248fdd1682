package io.kvrouter.tracker.policy;

import io.kvrouter.tracker.ledger.LoadView;

/**
 * When a replica is busy ({@code kvrouter.tracker.busy}): the router then queues requests itself,
 * where priorities and tenant fairness apply, rather than in the engine.
 *
 * @param kvUsage engine-reported KV usage at or above which a replica is busy
 * @param waiting engine-reported waiting requests at which a replica is busy
 * @param maxInFlight reservations of every router at which a replica is busy
 */
public record BusyThresholds(double kvUsage, int waiting, int maxInFlight) {

  /** The defaults of {@code kvrouter.tracker.busy}. */
  public static final BusyThresholds DEFAULTS = new BusyThresholds(0.97, 64, 512);

  public BusyThresholds {
    if (!(kvUsage > 0) || waiting < 1 || maxInFlight < 1) {
      throw new IllegalArgumentException(
          "busy thresholds must be positive: kv usage "
              + kvUsage
              + ", waiting "
              + waiting
              + ", in flight "
              + maxInFlight);
    }
  }

  /** Whether {@code replica} is over a threshold in {@code load}. */
  public boolean busy(LoadView load, int replica) {
    return load.kvUsage(replica) >= kvUsage
        || load.waiting(replica) >= waiting
        || load.inFlight(replica) >= maxInFlight;
  }
}

package io.kvrouter.loadtest.lab;

import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.tracker.KvTrackerCore;
import io.kvrouter.tracker.TrackerConfig;
import io.kvrouter.tracker.policy.PolicyConfig;

/**
 * How the lab's simulations build their routers (a {@link KvTrackerCore} with the tracker's default
 * leases and TTLs) and what a {@link LabEngine} reports to them, so the policy lab and the PD lab
 * cannot drift apart on either.
 */
final class LabRouters {

  private LabRouters() {}

  /** A router named {@code ingressId} running {@code policy}, its index sized for the blocks. */
  static KvTrackerCore router(
      String ingressId, String policy, PolicyConfig config, long seed, int expectedBlocks) {
    TrackerConfig base = TrackerConfig.defaults(ingressId);
    return new KvTrackerCore(
        new TrackerConfig(
            base.ingressId(),
            policy,
            config,
            seed,
            base.leaseMillis(),
            base.predictedTtlMillis(),
            base.approximateTtlMillis(),
            expectedBlocks));
  }

  /** The load report {@code engine} sends at {@code nowMicros} (virtual time). */
  static ReplicaLoad load(LabEngine engine, long nowMicros) {
    return new ReplicaLoad(
        engine.replicaId(),
        0,
        engine.runningCount(),
        engine.waitingCount(),
        engine.kvUsage(),
        engine.prefixQueries(),
        engine.prefixHits(),
        nowMicros / 1000);
  }
}

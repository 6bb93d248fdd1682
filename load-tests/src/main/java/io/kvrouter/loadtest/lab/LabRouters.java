package io.kvrouter.loadtest.lab;

import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.Tier;
import io.kvrouter.tracker.KvTrackerCore;
import io.kvrouter.tracker.TrackerConfig;
import io.kvrouter.tracker.policy.BusyThresholds;
import io.kvrouter.tracker.policy.PolicySettings;
import java.util.List;

/**
 * How the lab's simulations build their routers (a {@link KvTrackerCore} with the tracker's default
 * leases and TTLs) and what a {@link LabEngine} reports to them, so the policy lab and the PD lab
 * cannot drift apart on either; and how the policy lab builds its engines and announces them to its
 * routers.
 */
final class LabRouters {

  private LabRouters() {}

  /**
   * A router named {@code ingressId} running the policy named {@code policy} ({@link
   * PolicySettings#parse}) with the tracker's default busy rule, its index sized for the blocks.
   */
  static KvTrackerCore router(String ingressId, String policy, long seed, int expectedBlocks) {
    TrackerConfig base = TrackerConfig.defaults(ingressId);
    return new KvTrackerCore(
        new TrackerConfig(
            base.ingressId(),
            PolicySettings.parse(policy),
            BusyThresholds.DEFAULTS,
            seed,
            base.leaseMillis(),
            base.predictedTtlMillis(),
            base.approximateTtlMillis(),
            expectedBlocks));
  }

  /**
   * The {@code count} routers of a policy-lab run ({@code ingress-0} ...), each running {@code
   * policy} with its default configuration, their indexes sized for half the workload's blocks.
   */
  static KvTrackerCore[] routers(int count, String policy, long seed, PromptKeys keys) {
    long total = 0;
    for (int i = 0; i < keys.size(); i++) {
      total += keys.of(i).length;
    }
    int expected = (int) Math.min(1 << 22, Math.max(1 << 16, total / 2));
    KvTrackerCore[] routers = new KvTrackerCore[count];
    for (int r = 0; r < count; r++) {
      routers[r] = router("ingress-" + r, policy, seed, expected);
    }
    return routers;
  }

  /**
   * Engine {@code replica} ({@code id}) of the policy lab, shaped as {@code config} says: its
   * capacity, limits, CPU tier and, when the run has adapters, its adapter slots.
   */
  static LabEngine engine(int replica, String id, LabConfig config, LabEngine.Listener listener) {
    LabEngine engine =
        new LabEngine(
            replica,
            id,
            config.blockSize(),
            config.effectiveCapacity(),
            config.maxNumSeqs(),
            config.maxBatchedTokens(),
            config.cpuBlocks(),
            config.cpuLoadMicrosPerBlock(),
            listener);
    return config.adapters() > 0
        ? engine.withAdapters(config.adapterSlots(), config.adapterLoadMicros())
        : engine;
  }

  /** Replica {@code id} of the policy lab as its routers know it: both roles, its tiers. */
  static ReplicaInfo replica(String id, LabConfig config) {
    return new ReplicaInfo(
        id,
        0,
        LabConfig.MODEL,
        "sim://" + id,
        config.blockSize(),
        config.cpuBlocks() > 0 ? List.of(Tier.GPU, Tier.CPU) : List.of(Tier.GPU),
        "both",
        true,
        true);
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

package io.kvrouter.ingress.node;

import com.typesafe.config.Config;
import io.kvrouter.tracker.TrackerConfig;
import java.time.Duration;

/**
 * The node's tracker settings, read once at start-up from {@code kvrouter.tracker} (documented in
 * the ingress's {@code reference.conf}); {@link #trackerConfig} turns them into the plain-Java
 * core's {@link TrackerConfig}.
 *
 * @param policy the routing policy's name
 * @param nearTieRandomisation whether near-ties between replicas are broken at random
 * @param tickInterval how often leases and predicted entries are expired
 * @param lease how long a reservation holds if it is never released
 * @param predictedTtl how long a predicted entry lives on a replica that publishes KV events
 * @param approximateTtl how long a predicted entry lives on a replica without KV events
 */
public record TrackerSettings(
    String policy,
    boolean nearTieRandomisation,
    Duration tickInterval,
    Duration lease,
    Duration predictedTtl,
    Duration approximateTtl) {

  /** Reads {@code kvrouter.tracker} from {@code config}. */
  public static TrackerSettings fromConfig(Config config) {
    Config c = config.getConfig("kvrouter.tracker");
    return new TrackerSettings(
        c.getString("policy"),
        c.getBoolean("near-tie-randomisation"),
        c.getDuration("tick-interval"),
        c.getDuration("lease"),
        c.getDuration("predicted-ttl"),
        c.getDuration("approximate-ttl"));
  }

  /** The core's configuration for the tracker of ingress {@code ingressId}. */
  public TrackerConfig trackerConfig(String ingressId) {
    TrackerConfig c =
        TrackerConfig.defaults(ingressId)
            .withPolicy(policy)
            .withLeaseAndTtls(lease.toMillis(), predictedTtl.toMillis(), approximateTtl.toMillis());
    return nearTieRandomisation
        ? c
        : c.withPolicyConfig(c.policyConfig().withoutNearTieRandomisation());
  }
}

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
 * @param nearTieRandomisation whether near-ties between replicas are spread across routers (the
 *     kvrouter policy's concurrency rules and intents; off: {@link
 *     io.kvrouter.tracker.policy.PolicyConfig#withoutNearTieRandomisation()})
 * @param tickInterval how often leases and predicted entries are expired
 * @param lease how long a reservation holds if it is never released
 * @param predictedTtl how long a predicted entry lives on a replica that publishes KV events
 * @param approximateTtl how long a predicted entry lives on a replica without KV events
 * @param predictedConfirmGrace how long a predicted entry outlives its request's prefill on a
 *     replica with KV events, unless the engine confirmed it
 * @param maxIndexBytes the prefix index's memory budget in bytes (0: none)
 * @param busyKvUsage a replica reporting this KV usage is busy
 * @param busyWaiting a replica reporting this many waiting requests is busy
 * @param busyMaxInFlight a replica holding this many reservations of every ingress is busy
 * @param cpuLoadPerToken time to load one token's KV back from a replica's CPU tier
 * @param compactReservationWire true: reservation events travel in their compact form ({@code
 *     reservation-wire = compact}); false: in the full form every version reads ({@code legacy})
 */
public record TrackerSettings(
    String policy,
    boolean nearTieRandomisation,
    Duration tickInterval,
    Duration lease,
    Duration predictedTtl,
    Duration approximateTtl,
    Duration predictedConfirmGrace,
    long maxIndexBytes,
    double busyKvUsage,
    int busyWaiting,
    int busyMaxInFlight,
    Duration cpuLoadPerToken,
    boolean compactReservationWire) {

  /** Reads {@code kvrouter.tracker} from {@code config}. */
  public static TrackerSettings fromConfig(Config config) {
    Config c = config.getConfig("kvrouter.tracker");
    return new TrackerSettings(
        c.getString("policy"),
        c.getBoolean("near-tie-randomisation"),
        c.getDuration("tick-interval"),
        c.getDuration("lease"),
        c.getDuration("predicted-ttl"),
        c.getDuration("approximate-ttl"),
        c.getDuration("predicted-confirm-grace"),
        c.getBytes("max-index-bytes"),
        c.getDouble("busy.kv-usage"),
        c.getInt("busy.waiting"),
        c.getInt("busy.max-in-flight"),
        c.getDuration("cpu-load-per-token"),
        reservationWire(c.getString("reservation-wire")));
  }

  private static boolean reservationWire(String value) {
    return switch (value) {
      case "compact" -> true;
      case "legacy" -> false;
      default ->
          throw new IllegalArgumentException(
              "kvrouter.tracker.reservation-wire must be compact or legacy, was " + value);
    };
  }

  /** The core's configuration for the tracker of ingress {@code ingressId}. */
  public TrackerConfig trackerConfig(String ingressId) {
    TrackerConfig c =
        TrackerConfig.defaults(ingressId)
            .withPolicy(policy)
            .withLeaseAndTtls(lease.toMillis(), predictedTtl.toMillis(), approximateTtl.toMillis())
            .withPredictedConfirm(predictedConfirmGrace.toMillis())
            .withMaxIndexBytes(maxIndexBytes)
            .withCompactReservations(compactReservationWire);
    c =
        c.withPolicyConfig(
            c.policyConfig()
                .withBusyThresholds(busyKvUsage, busyWaiting, busyMaxInFlight)
                .withCpuLoadMicrosPerToken(cpuLoadPerToken.toNanos() / 1000.0));
    return nearTieRandomisation
        ? c
        : c.withPolicyConfig(c.policyConfig().withoutNearTieRandomisation());
  }
}

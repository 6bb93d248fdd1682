package io.kvrouter.ingress.node;

import com.typesafe.config.Config;
import io.kvrouter.tracker.TrackerConfig;
import io.kvrouter.tracker.policy.BusyThresholds;
import io.kvrouter.tracker.policy.Policies;
import io.kvrouter.tracker.policy.PolicySettings;
import java.time.Duration;

/**
 * The node's tracker settings, read once at start-up from {@code kvrouter.tracker} (documented in
 * kv-tracker's {@code reference.conf}); {@link #trackerConfig} turns them into the plain-Java
 * core's {@link TrackerConfig}.
 *
 * @param policy the routing policy and its settings ({@code kvrouter.tracker.policy})
 * @param tickInterval how often leases and predicted entries are expired
 * @param lease how long a reservation holds if it is never released
 * @param predictedTtl how long a predicted entry lives on a replica that publishes KV events
 * @param approximateTtl how long a predicted entry lives on a replica without KV events
 * @param predictedConfirmGrace how long a predicted entry outlives its request's prefill on a
 *     replica with KV events, unless the engine confirmed it
 * @param maxIndexBytes the prefix index's memory budget in bytes (0: none)
 * @param busy when a replica is busy ({@code kvrouter.tracker.busy})
 * @param compactReservationWire true: reservation events travel in their compact form ({@code
 *     reservation-wire = compact}); false: in the full form every version reads ({@code legacy})
 */
public record TrackerSettings(
    PolicySettings policy,
    Duration tickInterval,
    Duration lease,
    Duration predictedTtl,
    Duration approximateTtl,
    Duration predictedConfirmGrace,
    long maxIndexBytes,
    BusyThresholds busy,
    boolean compactReservationWire) {

  /**
   * Reads {@code kvrouter.tracker} from {@code config}.
   *
   * @throws IllegalArgumentException naming the setting, for an invalid one or a policy this node
   *     does not know
   */
  public static TrackerSettings fromConfig(Config config) {
    Config c = config.getConfig("kvrouter.tracker");
    PolicySettings policy = PolicySettings.fromConfig(c.getConfig("policy"));
    if (!Policies.known(policy.name())) {
      throw new IllegalArgumentException(
          "kvrouter.tracker.policy.name: unknown policy '"
              + policy.name()
              + "'; known: "
              + String.join(", ", Policies.names()));
    }
    return new TrackerSettings(
        policy,
        c.getDuration("tick-interval"),
        c.getDuration("lease"),
        c.getDuration("predicted-ttl"),
        c.getDuration("approximate-ttl"),
        c.getDuration("predicted-confirm-grace"),
        c.getBytes("max-index-bytes"),
        new BusyThresholds(
            c.getDouble("busy.kv-usage"), c.getInt("busy.waiting"), c.getInt("busy.max-in-flight")),
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
    return TrackerConfig.defaults(ingressId)
        .withPolicy(policy)
        .withBusy(busy)
        .withLeaseAndTtls(lease.toMillis(), predictedTtl.toMillis(), approximateTtl.toMillis())
        .withPredictedConfirm(predictedConfirmGrace.toMillis())
        .withMaxIndexBytes(maxIndexBytes)
        .withCompactReservations(compactReservationWire);
  }
}

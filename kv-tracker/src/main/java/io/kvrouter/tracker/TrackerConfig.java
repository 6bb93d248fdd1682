package io.kvrouter.tracker;

import io.kvrouter.tracker.policy.BusyThresholds;
import io.kvrouter.tracker.policy.PolicySettings;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Settings of one tracker instance.
 *
 * @param ingressId this node's ingress id: the origin stamped on its reservation events
 * @param policy the routing policy and its settings ({@code kvrouter.tracker.policy})
 * @param busy when a replica is busy ({@code kvrouter.tracker.busy})
 * @param seed seed of the policy's random generator (mixed with the ingress id, so two ingresses
 *     with the same seed still draw different tie-breaks)
 * @param leaseMillis how long a reservation holds if never released
 * @param predictedTtlMillis how long a predicted entry lives on a replica that publishes KV events
 *     (its own event should confirm it well before)
 * @param approximateTtlMillis how long a predicted entry lives on a replica without KV events,
 *     where predicted entries are the whole index (Dynamo's ApproxKvIndexer uses 120 s)
 * @param expectedBlocks index nodes to size for up front
 * @param predictedConfirmMillis once a reservation's prefill completed on a replica that publishes
 *     KV events, how long its predicted entries still live: the engine's own events should have
 *     confirmed the blocks by then, and a prediction the engine never confirmed must not keep
 *     predicting (nor hide a wrong index from the accuracy check)
 * @param maxIndexBytes the index's memory budget in bytes (0: none); beyond it the least recently
 *     matched entries are evicted
 * @param compactReservations true: own reservations are named towards the peers by the seq of their
 *     {@code Reserved}, as the compact reservation wire carries them ({@link
 *     io.kvrouter.tracker.sync.ReservationCodec}); false: by request id, as the full form does
 */
public record TrackerConfig(
    String ingressId,
    PolicySettings policy,
    BusyThresholds busy,
    long seed,
    long leaseMillis,
    long predictedTtlMillis,
    long approximateTtlMillis,
    int expectedBlocks,
    long predictedConfirmMillis,
    long maxIndexBytes,
    boolean compactReservations) {

  /** Default of {@link #predictedConfirmMillis}. */
  public static final long DEFAULT_CONFIRM_MILLIS = 2_000;

  /** Default of {@link #maxIndexBytes}: 1 GiB. */
  public static final long DEFAULT_MAX_INDEX_BYTES = 1L << 30;

  public TrackerConfig {
    Objects.requireNonNull(ingressId, "ingressId");
    Objects.requireNonNull(policy, "policy");
    Objects.requireNonNull(busy, "busy");
    if (leaseMillis <= 0 || predictedTtlMillis <= 0 || approximateTtlMillis <= 0) {
      throw new IllegalArgumentException("lease and TTLs must be positive");
    }
    if (predictedConfirmMillis <= 0 || maxIndexBytes < 0) {
      throw new IllegalArgumentException(
          "the confirmation window must be positive and the index budget not negative");
    }
  }

  /**
   * A configuration with the default confirmation window and index budget, its reservations named
   * by request id (the full wire form).
   */
  public TrackerConfig(
      String ingressId,
      PolicySettings policy,
      BusyThresholds busy,
      long seed,
      long leaseMillis,
      long predictedTtlMillis,
      long approximateTtlMillis,
      int expectedBlocks) {
    this(
        ingressId,
        policy,
        busy,
        seed,
        leaseMillis,
        predictedTtlMillis,
        approximateTtlMillis,
        expectedBlocks,
        DEFAULT_CONFIRM_MILLIS,
        DEFAULT_MAX_INDEX_BYTES,
        false);
  }

  /** Defaults: policy {@code kvrouter}, lease 10 min, predicted TTL 30 s, approximate 120 s. */
  public static TrackerConfig defaults(String ingressId) {
    return new TrackerConfig(
        ingressId,
        PolicySettings.defaults(),
        BusyThresholds.DEFAULTS,
        0x5eedL,
        600_000,
        30_000,
        120_000,
        1 << 16);
  }

  /** The same with the policy named {@code name} ({@link PolicySettings#parse}). */
  public TrackerConfig withPolicy(String name) {
    return withPolicy(PolicySettings.parse(name));
  }

  /** The same with another policy or policy settings. */
  public TrackerConfig withPolicy(PolicySettings settings) {
    return with(b -> b.policy = settings);
  }

  /** The same with other busy thresholds. */
  public TrackerConfig withBusy(BusyThresholds thresholds) {
    return with(b -> b.busy = thresholds);
  }

  public TrackerConfig withExpectedBlocks(int blocks) {
    return with(b -> b.expectedBlocks = blocks);
  }

  /** The same with another lease and other predicted-entry TTLs, all in milliseconds. */
  public TrackerConfig withLeaseAndTtls(long lease, long predictedTtl, long approximateTtl) {
    return with(
        b -> {
          b.leaseMillis = lease;
          b.predictedTtlMillis = predictedTtl;
          b.approximateTtlMillis = approximateTtl;
        });
  }

  /** The same with another confirmation window for predicted entries, in milliseconds. */
  public TrackerConfig withPredictedConfirm(long millis) {
    return with(b -> b.predictedConfirmMillis = millis);
  }

  /** The same with another index memory budget in bytes (0: none). */
  public TrackerConfig withMaxIndexBytes(long bytes) {
    return with(b -> b.maxIndexBytes = bytes);
  }

  /** The same with own reservations named by seq (true) or by request id (false). */
  public TrackerConfig withCompactReservations(boolean compact) {
    return with(b -> b.compactReservations = compact);
  }

  /** Returns a copy with {@code change} applied to the builder of its components. */
  private TrackerConfig with(Consumer<Builder> change) {
    Builder b = new Builder(this);
    change.accept(b);
    return b.build();
  }

  /** The components of a {@link TrackerConfig} to change one or a few, as the withers do. */
  private static final class Builder {
    private String ingressId;
    private PolicySettings policy;
    private BusyThresholds busy;
    private long seed;
    private long leaseMillis;
    private long predictedTtlMillis;
    private long approximateTtlMillis;
    private int expectedBlocks;
    private long predictedConfirmMillis;
    private long maxIndexBytes;
    private boolean compactReservations;

    private Builder(TrackerConfig c) {
      ingressId = c.ingressId;
      policy = c.policy;
      busy = c.busy;
      seed = c.seed;
      leaseMillis = c.leaseMillis;
      predictedTtlMillis = c.predictedTtlMillis;
      approximateTtlMillis = c.approximateTtlMillis;
      expectedBlocks = c.expectedBlocks;
      predictedConfirmMillis = c.predictedConfirmMillis;
      maxIndexBytes = c.maxIndexBytes;
      compactReservations = c.compactReservations;
    }

    private TrackerConfig build() {
      return new TrackerConfig(
          ingressId,
          policy,
          busy,
          seed,
          leaseMillis,
          predictedTtlMillis,
          approximateTtlMillis,
          expectedBlocks,
          predictedConfirmMillis,
          maxIndexBytes,
          compactReservations);
    }
  }
}

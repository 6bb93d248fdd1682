package io.kvrouter.ingress.metrics;

import io.kvrouter.config.serialization.WireTraffic;
import io.kvrouter.protocol.WirePlane;
import io.kvrouter.tracker.TrackerStats;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToLongFunction;

/**
 * The metrics of an ingress node's tracker, its event and reservation planes and the cluster-wide
 * consistency view, registered beside {@link IngressMetrics}'s request metrics in the same
 * registry. Names as exported:
 *
 * <ul>
 *   <li>{@code kvrouter_event_gaps_total{plane}}, {@code kvrouter_replays_total{plane}}, {@code
 *       kvrouter_snapshots_total{plane}}, {@code kvrouter_digest_mismatches_total}: how the tracker
 *       kept up with the agents' events and the peers' reservations
 *   <li>{@code kvrouter_event_lag_seconds}, {@code kvrouter_reservation_propagation_seconds}: how
 *       long a KV event batch and a peer's reservation took to arrive (histograms)
 *   <li>{@code kvrouter_peer_intents_total}, {@code kvrouter_peer_timings_total}: peers' intents
 *       and shared timing models received
 *   <li>{@code kvrouter_replica_inflight{replica}}: in-flight requests per replica, as this node's
 *       tracker sees them; {@code kvrouter_replica_lag_ms{replica}}: how much later than predicted
 *       first tokens from the replica have lately come
 *   <li>{@code kvrouter_index_blocks}, {@code kvrouter_index_holdings}, {@code
 *       kvrouter_index_bytes}, {@code kvrouter_predicted_runs}, {@code kvrouter_open_reservations},
 *       {@code kvrouter_detached_reservations}, {@code kvrouter_index_evicted_total}: the size of
 *       this node's tracker state (TrackerStats)
 *   <li>{@code kvrouter_replica_converged{replica}} (1 or 0) and {@code
 *       kvrouter_replica_accurate{replica}} (1, 0, or -1 before any ingress has a sample): per
 *       replica, whether the trackers agree with each other and whether they agree with the engine,
 *       as of this node's last cluster-wide consistency view ({@code /admin/consistency})
 *   <li>{@code kvrouter_plane_bytes_total{plane,direction}}, {@code
 *       kvrouter_plane_messages_total{plane,direction}}: what this node's Kryo serializer wrote
 *       ({@code sent}) and read ({@code received}) on the reservation, event, load, gate planes
 *       ({@link WireTraffic}; payload bytes, without the transport's framing)
 *   <li>{@code kvrouter_plane_cpu_seconds_total{plane,work}}: thread CPU this node spent on each
 *       plane's messages, by {@code work} = {@code encode}, {@code decode} (Kryo) and {@code apply}
 *       (the tracker applying agents' events and peers' reservations)
 * </ul>
 *
 * Thread-safe; every update is a lock-free counter increment or map lookup.
 */
public final class TrackerMetrics {

  private final MeterRegistry registry;
  private final Counter peerIntents;
  private final Counter peerTimings;
  private final Map<String, AtomicLong> inflightGauges = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> lagGauges = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> convergedGauges = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> accurateGauges = new ConcurrentHashMap<>();
  private final AtomicReference<TrackerStats> stats =
      new AtomicReference<>(new TrackerStats(0, 0, 0, 0, 0, 0, 0));

  /** Registers the tracker's meters in {@code registry}. */
  TrackerMetrics(MeterRegistry registry) {
    this.registry = registry;
    // Export the consistency meters from the start, so dashboards see zeros rather than nothing.
    for (String plane : new String[] {"events", "reservations"}) {
      Counter.builder("kvrouter.event.gaps")
          .description("Gaps found in an event stream, by plane")
          .tag("plane", plane)
          .register(registry);
      Counter.builder("kvrouter.replays")
          .description("Replays asked for, by plane")
          .tag("plane", plane)
          .register(registry);
      Counter.builder("kvrouter.snapshots")
          .description("Snapshots installed, by plane")
          .tag("plane", plane)
          .register(registry);
    }
    counter("kvrouter.digest.mismatches", "Tracker cells found diverged at equal watermarks");
    peerIntents =
        counter("kvrouter.peer.intents", "Peers' intents received (policies that read intents)");
    peerTimings =
        counter("kvrouter.peer.timings", "Peers' shared timing models received (under intents)");
    statsGauge(
        "kvrouter.index.blocks", "Distinct blocks in the prefix index", s -> s.indexBlocks());
    statsGauge(
        "kvrouter.index.holdings",
        "(replica, block) holdings the prefix index maps",
        s -> s.indexHoldings());
    statsGauge(
        "kvrouter.index.bytes", "Estimated heap held by the prefix index", s -> s.indexBytes());
    statsGauge("kvrouter.predicted.runs", "Live predicted runs", s -> s.predictedRuns());
    statsGauge(
        "kvrouter.open.reservations",
        "Reservations in this node's ledger, every origin",
        s -> s.openReservations());
    statsGauge(
        "kvrouter.detached.reservations",
        "Reservations on replicas this node's tracker does not know",
        s -> s.detachedReservations());
    statsGauge(
        "kvrouter.index.evicted",
        "Holdings the index memory budget evicted (a total)",
        s -> s.evictedBlocks());
    lagTimer(
        "kvrouter.event.lag",
        "Time from an agent publishing a KV event batch to this tracker receiving it");
    lagTimer(
        "kvrouter.reservation.propagation",
        "Time from a peer tracker's reservation to this tracker receiving it");
  }

  /**
   * Exports the bytes and messages {@code traffic} counts, by plane and direction, and the CPU
   * spent on each plane, by work.
   */
  public void wire(WireTraffic traffic) {
    for (WirePlane plane : WirePlane.values()) {
      for (WireTraffic.Direction direction : WireTraffic.Direction.values()) {
        FunctionCounter.builder("kvrouter.plane.bytes", traffic, t -> t.bytes(plane, direction))
            .description("Kryo payload bytes this node wrote or read, by plane and direction")
            .tag("plane", plane.label())
            .tag("direction", direction.label())
            .register(registry);
        FunctionCounter.builder(
                "kvrouter.plane.messages", traffic, t -> t.messages(plane, direction))
            .description("Kryo messages this node wrote or read, by plane and direction")
            .tag("plane", plane.label())
            .tag("direction", direction.label())
            .register(registry);
      }
      for (WireTraffic.Work work : WireTraffic.Work.values()) {
        FunctionCounter.builder("kvrouter.plane.cpu", traffic, t -> t.cpuNanos(plane, work) / 1e9)
            .description(
                "Thread CPU this node spent encoding, decoding and applying messages, by plane")
            .baseUnit("seconds")
            .tag("plane", plane.label())
            .tag("work", work.label())
            .register(registry);
      }
    }
  }

  private Counter counter(String name, String description) {
    return Counter.builder(name).description(description).register(registry);
  }

  private Timer lagTimer(String name, String description) {
    return LatencyTimers.histogram(
        registry, name, description, Duration.ofMillis(1), Duration.ofSeconds(60));
  }

  /** A KV event batch arrived {@code millis} after its agent published it. */
  public void eventLag(long millis) {
    lagTimer(
            "kvrouter.event.lag",
            "Time from an agent publishing a KV event batch to this tracker receiving it")
        .record(Duration.ofMillis(Math.max(0, millis)));
  }

  /** A peer's reservation arrived {@code millis} after its tracker made it. */
  public void reservationPropagation(long millis) {
    lagTimer(
            "kvrouter.reservation.propagation",
            "Time from a peer tracker's reservation to this tracker receiving it")
        .record(Duration.ofMillis(Math.max(0, millis)));
  }

  /** A peer's intent ({@code timing} false) or shared timing model reached this ingress. */
  public void peerIntent(boolean timing) {
    (timing ? peerTimings : peerIntents).increment();
  }

  /** This tracker found a gap in a replica's KV events or a peer's reservation events. */
  public void gap(String plane) {
    Counter.builder("kvrouter.event.gaps")
        .description("Gaps found in an event stream, by plane")
        .tag("plane", plane)
        .register(registry)
        .increment();
  }

  /** This tracker asked for a replay (of a replica's batches or a peer's reservations). */
  public void replay(String plane) {
    Counter.builder("kvrouter.replays")
        .description("Replays asked for, by plane")
        .tag("plane", plane)
        .register(registry)
        .increment();
  }

  /** This tracker installed a snapshot (of a replica or of a peer's reservations). */
  public void snapshot(String plane) {
    Counter.builder("kvrouter.snapshots")
        .description("Snapshots installed, by plane")
        .tag("plane", plane)
        .register(registry)
        .increment();
  }

  /** The consistency view found {@code cells} tracker cells diverged at equal watermarks. */
  public void digestMismatches(int cells) {
    counter("kvrouter.digest.mismatches", "Tracker cells found diverged at equal watermarks")
        .increment(cells);
  }

  private void statsGauge(String name, String description, ToLongFunction<TrackerStats> field) {
    Gauge.builder(name, stats, ref -> field.applyAsLong(ref.get()))
        .description(description)
        .register(registry);
  }

  /** The size of this node's tracker state, refreshed with the gauges. */
  public void trackerStats(TrackerStats now) {
    stats.set(now);
  }

  /**
   * A replica's cell of the last consistency view: converged (the trackers agree with each other)
   * and accurate (they agree with the engine; null before any ingress has a sample).
   */
  public void replicaConsistency(String replica, boolean converged, Boolean accurate) {
    setPerReplica(
        convergedGauges,
        "kvrouter.replica.converged",
        "1 while the replica is converged in this node's last consistency view, 0 when not",
        replica,
        converged ? 1 : 0);
    setPerReplica(
        accurateGauges,
        "kvrouter.replica.accurate",
        "1 while the replica is accurate in this node's last consistency view, 0 when not, -1"
            + " before any sample",
        replica,
        accurate == null ? -1 : accurate ? 1 : 0);
  }

  /**
   * Sets how much later than predicted this node's first tokens from a replica have lately come, ms
   * (the part above the policy's floor is charged to the replica's cost).
   */
  public void lag(String replica, double millis) {
    setPerReplica(
        lagGauges,
        "kvrouter.replica.lag.ms",
        "How much later than predicted this node's first tokens from the replica have lately"
            + " come, ms",
        replica,
        millis);
  }

  /** Sets the in-flight gauge of a replica. */
  public void inflight(String replica, int value) {
    setPerReplica(
        inflightGauges,
        "kvrouter.replica.inflight",
        "In-flight requests per replica, as this node's tracker sees them",
        replica,
        value);
  }

  /** Sets {@code replica}'s gauge {@code name}, registered on first use, to {@code value}. */
  private void setPerReplica(
      Map<String, AtomicLong> gauges,
      String name,
      String description,
      String replica,
      double value) {
    gauges
        .computeIfAbsent(
            replica,
            r -> {
              AtomicLong bits = new AtomicLong();
              Gauge.builder(name, bits, g -> Double.longBitsToDouble(g.get()))
                  .description(description)
                  .tag("replica", r)
                  .register(registry);
              return bits;
            })
        .set(Double.doubleToLongBits(value));
  }
}

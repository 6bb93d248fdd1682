package io.kvrouter.ingress.metrics;

import io.kvrouter.config.serialization.WireTraffic;
import io.kvrouter.protocol.TrackerReport;
import io.kvrouter.protocol.WirePlane;
import io.kvrouter.tracker.TrackerStats;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToLongFunction;

/**
 * The ingress's Prometheus metrics (served at {@code GET /metrics}). Names as exported:
 *
 * <ul>
 *   <li>{@code kvrouter_requests_total{model,status}}: answered requests by HTTP status
 *   <li>{@code kvrouter_decision_seconds}: select-and-reserve latency (histogram), without the wait
 *       below
 *   <li>{@code kvrouter_decision_hold_seconds}: how long long prompts waited before their decision
 *       (the kvrouter policy's {@code holdFromMillis} and {@code burstHoldFromMillis} among several
 *       routers, {@code soloHoldMillis} alone; histogram, held decisions only)
 *   <li>{@code kvrouter_prompt_tokens_total}, {@code kvrouter_predicted_cached_tokens_total},
 *       {@code kvrouter_engine_cached_tokens_total}: token counts of routed requests
 *   <li>{@code kvrouter_prediction_error_tokens{replica}}: |predicted − engine-reported| cached
 *       tokens per request (histogram)
 *   <li>{@code kvrouter_replica_inflight{replica}}: in-flight requests per replica, as this node's
 *       tracker sees them
 *   <li>{@code kvrouter_retries_total}, {@code kvrouter_rejected_total{reason}}
 *   <li>{@code kvrouter_prediction_mismatch_ratio{replica}}, {@code
 *       kvrouter_prediction_mismatch_alert{replica}}: index accuracy ({@link PredictionAccuracy})
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
public final class IngressMetrics implements ProxyListener {

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final Timer decision;
  private final Timer decisionHold;
  private final Counter promptTokens;
  private final Counter predictedCached;
  private final Counter engineCached;
  private final Counter retries;
  private final Counter peerIntents;
  private final Counter peerTimings;
  private final Map<String, AtomicLong> inflightGauges = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> lagGauges = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> convergedGauges = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> accurateGauges = new ConcurrentHashMap<>();
  // Meters met on every request, looked up once (a builder per request allocates an id each time).
  private final Map<String, Counter> requestCounters = new ConcurrentHashMap<>();
  private final Map<String, DistributionSummary> predictionErrors = new ConcurrentHashMap<>();
  private final PredictionAccuracy accuracy;
  private final AtomicReference<TrackerStats> stats =
      new AtomicReference<>(new TrackerStats(0, 0, 0, 0, 0, 0, 0));
  private final Map<String, Counter> attempts = new ConcurrentHashMap<>();

  /** Metrics with the accuracy settings of the default configuration. */
  public IngressMetrics() {
    this(AccuracySettings.fromConfig(com.typesafe.config.ConfigFactory.load()));
  }

  /** Metrics judging index accuracy by {@code accuracySettings}. */
  public IngressMetrics(AccuracySettings accuracySettings) {
    accuracy = PredictionAccuracy.of(registry, accuracySettings);
    decision =
        upToASecond(
            "kvrouter.decision",
            "Select-and-reserve latency, without the wait of held long prompts",
            Duration.ofNanos(1_000));
    decisionHold =
        upToASecond(
            "kvrouter.decision.hold",
            "Wait of long prompts before their decision among several routers",
            Duration.ofMillis(1));
    promptTokens =
        Counter.builder("kvrouter.prompt.tokens")
            .description("Prompt tokens routed")
            .register(registry);
    predictedCached =
        Counter.builder("kvrouter.predicted.cached.tokens")
            .description("Prompt tokens the tracker predicted cached on the chosen replica")
            .register(registry);
    engineCached =
        Counter.builder("kvrouter.engine.cached.tokens")
            .description("Prompt tokens the engines reported cached (usage.prompt_tokens_details)")
            .register(registry);
    retries =
        Counter.builder("kvrouter.retries")
            .description("Attempts retried on another replica")
            .register(registry);
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

  // ---------------------------------------------------------------- consistency (event planes)

  private Counter counter(String name, String description) {
    return Counter.builder(name).description(description).register(registry);
  }

  private Timer lagTimer(String name, String description) {
    return Timer.builder(name)
        .description(description)
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofMillis(1))
        .maximumExpectedValue(Duration.ofSeconds(60))
        .register(registry);
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

  /**
   * The router loaded a LoRA adapter on a replica that lacked it ({@code loaded}), or the engine
   * did not load it (the request was decided again without that replica).
   */
  public void adapterLoad(boolean loaded) {
    Counter.builder("kvrouter.lora.loads")
        .description("LoRA adapters the router loaded where it spread them, by outcome")
        .tag("outcome", loaded ? "loaded" : "failed")
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

  /** This ingress's index accuracy per replica, for the consistency view. */
  public TrackerReport.Accuracy[] accuracy() {
    return accuracy.snapshot();
  }

  /** The Prometheus text exposition of every metric. */
  public String scrape() {
    return registry.scrape();
  }

  /** The underlying registry, for components that add their own meters. */
  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /** A timer with a percentile histogram from {@code least} to one second. */
  private Timer upToASecond(String name, String description, Duration least) {
    return Timer.builder(name)
        .description(description)
        .publishPercentileHistogram()
        .minimumExpectedValue(least)
        .maximumExpectedValue(Duration.ofSeconds(1))
        .register(registry);
  }

  /**
   * One decision: {@code nanos} from ask to reply, of which the tracker held the request {@code
   * heldMillis} (recorded apart; 0 for none).
   */
  public void decision(long nanos, long heldMillis) {
    decision.record(Duration.ofNanos(Math.max(0, nanos - heldMillis * 1_000_000)));
    if (heldMillis > 0) {
      decisionHold.record(Duration.ofMillis(heldMillis));
    }
  }

  public void request(String model, int status) {
    String m = model == null ? "" : model;
    requestCounters
        .computeIfAbsent(
            m + '\u0000' + status,
            k ->
                Counter.builder("kvrouter.requests")
                    .description("Requests answered, by model and HTTP status")
                    .tag("model", m)
                    .tag("status", Integer.toString(status))
                    .register(registry))
        .increment();
  }

  public void rejected(String reason) {
    Counter.builder("kvrouter.rejected")
        .description("Requests rejected before reaching a replica, by reason")
        .tag("reason", reason)
        .register(registry)
        .increment();
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

  @Override
  public void sent(String model, String replicaId) {
    attempts
        .computeIfAbsent(
            replicaId,
            r ->
                Counter.builder("kvrouter.replica.attempts")
                    .description("Attempts this node sent to each replica")
                    .tag("replica", r)
                    .register(registry))
        .increment();
  }

  @Override
  public void retried(String model, String replicaId, String reason) {
    retries.increment();
  }

  @Override
  public void answered(
      String model,
      String replicaId,
      int prompt,
      int predictedCachedTokens,
      int reportedCachedTokens) {
    promptTokens.increment(prompt);
    predictedCached.increment(Math.max(0, predictedCachedTokens));
    if (reportedCachedTokens >= 0) {
      engineCached.increment(reportedCachedTokens);
      predictionErrors
          .computeIfAbsent(
              replicaId,
              r ->
                  DistributionSummary.builder("kvrouter.prediction.error.tokens")
                      .description("|predicted - engine-reported| cached prompt tokens per request")
                      .baseUnit("tokens")
                      .tag("replica", r)
                      .serviceLevelObjectives(1, 16, 64, 256, 1024, 4096, 16384)
                      .register(registry))
          .record(Math.abs(predictedCachedTokens - reportedCachedTokens));
      accuracy.record(replicaId, prompt, predictedCachedTokens, reportedCachedTokens);
    }
  }
}

package io.kvrouter.ingress.metrics;

import io.kvrouter.ingress.proxy.ProxyListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The ingress's Prometheus metrics (served at {@code GET /metrics}). Names as exported:
 *
 * <ul>
 *   <li>{@code kvrouter_requests_total{model,status}}: answered requests by HTTP status
 *   <li>{@code kvrouter_decision_seconds}: select-and-reserve latency (histogram)
 *   <li>{@code kvrouter_prompt_tokens_total}, {@code kvrouter_predicted_cached_tokens_total},
 *       {@code kvrouter_engine_cached_tokens_total}: token counts of routed requests
 *   <li>{@code kvrouter_prediction_error_tokens{replica}}: |predicted − engine-reported| cached
 *       tokens per request (histogram)
 *   <li>{@code kvrouter_replica_inflight{replica}}: in-flight requests per replica, as this node's
 *       tracker sees them
 *   <li>{@code kvrouter_retries_total}, {@code kvrouter_rejected_total{reason}}
 *   <li>{@code kvrouter_prediction_mismatch_ratio{replica}}, {@code
 *       kvrouter_prediction_mismatch_alert{replica}}: index accuracy ({@link PredictionAccuracy})
 * </ul>
 *
 * Thread-safe; every update is a lock-free counter increment or map lookup.
 */
public final class IngressMetrics implements ProxyListener {

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final Timer decision;
  private final Counter promptTokens;
  private final Counter predictedCached;
  private final Counter engineCached;
  private final Counter retries;
  private final Map<String, AtomicInteger> inflightGauges = new ConcurrentHashMap<>();
  // Meters met on every request, looked up once (a builder per request allocates an id each time).
  private final Map<String, Counter> requestCounters = new ConcurrentHashMap<>();
  private final Map<String, DistributionSummary> predictionErrors = new ConcurrentHashMap<>();
  private final Map<String, Counter> attempts = new ConcurrentHashMap<>();
  private final PredictionAccuracy accuracy = PredictionAccuracy.withDefaults(registry);

  public IngressMetrics() {
    decision =
        Timer.builder("kvrouter.decision")
            .description("Select-and-reserve latency")
            .publishPercentileHistogram()
            .minimumExpectedValue(Duration.ofNanos(1_000))
            .maximumExpectedValue(Duration.ofSeconds(1))
            .register(registry);
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
    lagTimer(
        "kvrouter.event.lag",
        "Time from an agent publishing a KV event batch to this tracker receiving it");
    lagTimer(
        "kvrouter.reservation.propagation",
        "Time from a peer tracker's reservation to this tracker receiving it");
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

  /** The Prometheus text exposition of every metric. */
  public String scrape() {
    return registry.scrape();
  }

  /** The underlying registry, for components that add their own meters. */
  public PrometheusMeterRegistry registry() {
    return registry;
  }

  public void decision(long nanos) {
    decision.record(Duration.ofNanos(nanos));
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

  /** Sets the in-flight gauge of a replica. */
  public void inflight(String replica, int value) {
    inflightGauges
        .computeIfAbsent(
            replica,
            r -> {
              AtomicInteger holder = new AtomicInteger();
              Gauge.builder("kvrouter.replica.inflight", holder, AtomicInteger::get)
                  .description("In-flight requests per replica, as this node's tracker sees them")
                  .tag("replica", r)
                  .register(registry);
              return holder;
            })
        .set(value);
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

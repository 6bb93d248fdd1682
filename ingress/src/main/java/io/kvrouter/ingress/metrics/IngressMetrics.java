package io.kvrouter.ingress.metrics;

import io.kvrouter.protocol.TrackerReport;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The ingress's request metrics, and the registry served at {@code GET /metrics}. Names as
 * exported:
 *
 * <ul>
 *   <li>{@code kvrouter_requests_total{model,status}}: answered requests by HTTP status
 *   <li>{@code kvrouter_decision_seconds}: select-and-reserve latency (histogram), without the wait
 *       below
 *   <li>{@code kvrouter_decision_hold_seconds}: how long long prompts waited before their decision
 *       (the kvrouter policy's {@code hold.from} and {@code hold.burst.from} among several routers,
 *       {@code hold.solo} alone; histogram, held decisions only)
 *   <li>{@code kvrouter_prompt_tokens_total}, {@code kvrouter_predicted_cached_tokens_total},
 *       {@code kvrouter_engine_cached_tokens_total}: token counts of routed requests
 *   <li>{@code kvrouter_prediction_error_tokens{replica}}: |predicted − engine-reported| cached
 *       tokens per request (histogram)
 *   <li>{@code kvrouter_retries_total}, {@code kvrouter_rejected_total{reason}}
 *   <li>{@code kvrouter_prediction_mismatch_ratio{replica}}, {@code
 *       kvrouter_prediction_mismatch_alert{replica}}: index accuracy ({@link PredictionAccuracy})
 *   <li>{@code kvrouter_replica_attempts_total{replica}}: attempts sent to each replica
 *   <li>{@code kvrouter_request_hops_total{hop}}: answered requests by how their prompt was
 *       prefilled ({@code direct}, {@code prefill_skipped}, {@code prefill_decode}, {@code
 *       prefill_fallback})
 *   <li>{@code kvrouter_migrations_total{outcome}}: streams cut by their engine after the first
 *       byte, by what became of them ({@code migrated} to another replica, or {@code
 *       refused_tool_call}, {@code refused_structured}, {@code refused_unsupported}, {@code limit},
 *       {@code failed})
 *   <li>{@code kvrouter_lora_loads_total{outcome}}: LoRA adapters loaded where the router spread
 *       them
 * </ul>
 *
 * The tracker's, its planes' and the consistency view's metrics are {@link TrackerMetrics}, in the
 * same registry. Thread-safe; every update is a lock-free counter increment or map lookup.
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
  // Meters met on every request, looked up once (a builder per request allocates an id each time).
  private final Map<String, Counter> requestCounters = new ConcurrentHashMap<>();
  private final Map<String, DistributionSummary> predictionErrors = new ConcurrentHashMap<>();
  private final PredictionAccuracy accuracy;
  private final Map<String, Counter> attempts = new ConcurrentHashMap<>();
  private final Map<String, Counter> hops = new ConcurrentHashMap<>();
  private final Map<String, Counter> migrations = new ConcurrentHashMap<>();
  private final TrackerMetrics tracker;

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
    tracker = new TrackerMetrics(registry);
  }

  /** The metrics of this node's tracker, its planes and the consistency view. */
  public TrackerMetrics tracker() {
    return tracker;
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
    return LatencyTimers.histogram(registry, name, description, least, Duration.ofSeconds(1));
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
  public void answering(String model, String path) {
    hops.computeIfAbsent(
            path,
            p ->
                Counter.builder("kvrouter.request.hops")
                    .description(
                        "Requests answered, by how their prompt was prefilled: on the replica that"
                            + " answered, or on a prefill replica first")
                    .tag("hop", p)
                    .register(registry))
        .increment();
  }

  @Override
  public void migration(String model, String outcome) {
    migrations
        .computeIfAbsent(
            outcome,
            o ->
                Counter.builder("kvrouter.migrations")
                    .description(
                        "Streams cut by their engine after the first byte, by outcome: migrated"
                            + " to another replica, or why not")
                    .tag("outcome", o)
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

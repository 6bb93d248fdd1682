package io.kvrouter.ingress.traffic;

import io.kvrouter.ingress.metrics.LatencyTimers;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;

/**
 * Traffic management meters ({@code kvrouter_*} in {@code /metrics}): session routing, tenants'
 * admissions and limits, the router queue's waits and sheds, and predicted against observed time to
 * first token with the SLO outcome. Label values are bounded: tenants and priorities come from
 * configuration and clients, outcomes from fixed sets. Cheap and thread-safe (Micrometer looks
 * meters up by name and tags).
 */
public final class TrafficMetrics {

  private final MeterRegistry registry;

  public TrafficMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  /** Meters kept in a registry nobody reads (tests, tools). */
  public static TrafficMetrics discarding() {
    return new TrafficMetrics(new SimpleMeterRegistry());
  }

  /** A session-keyed request was routed: {@code new}, {@code kept} or {@code moved}. */
  public void session(String outcome) {
    Counter.builder("kvrouter.session.routes")
        .description("Requests with a session key, by what happened to its binding")
        .tag("outcome", outcome)
        .register(registry)
        .increment();
  }

  /** A tenant's request passed its limits (or it has none). */
  public void admitted(String tenant) {
    Counter.builder("kvrouter.tenant.requests")
        .description("Requests admitted per tenant (authenticated, within limits)")
        .tag("tenant", tenant)
        .register(registry)
        .increment();
  }

  /** A tenant's request hit a limit: {@code requests} or {@code tokens}. */
  public void rateLimited(String tenant, String limit) {
    Counter.builder("kvrouter.tenant.rate.limited")
        .description("Requests refused with 429 by a per-tenant limit")
        .tag("tenant", tenant)
        .tag("limit", limit)
        .register(registry)
        .increment();
  }

  /** A request presented no key or an unknown one. */
  public void unauthorized() {
    Counter.builder("kvrouter.tenant.unauthorized")
        .description("Requests refused with 401 (missing or unknown API key)")
        .register(registry)
        .increment();
  }

  /** A usage write did not reach the other ingresses in time (counted locally, gossiped later). */
  public void limitWriteUnconfirmed() {
    Counter.builder("kvrouter.tenant.limit.writes.unconfirmed")
        .description("Usage writes not acknowledged by every ingress in time")
        .register(registry)
        .increment();
  }

  /** A request left the router queue: {@code placed}, {@code shed}, {@code timeout}, ... */
  public void queued(int priority, String outcome, long nanos) {
    Timer.builder("kvrouter.queue.wait")
        .description("Time requests spent in the router queue, by priority and how they left")
        .tag("priority", Integer.toString(priority))
        .tag("outcome", outcome)
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofMillis(1))
        .maximumExpectedValue(Duration.ofSeconds(60))
        .register(registry)
        .record(Duration.ofNanos(Math.max(0, nanos)));
  }

  /** Exports how many requests wait in the router queue. */
  public <T> void queueWaiting(T queue, java.util.function.ToDoubleFunction<T> size) {
    io.micrometer.core.instrument.Gauge.builder("kvrouter.queue.waiting", queue, size)
        .description("Requests waiting in this ingress's router queue")
        .register(registry);
  }

  /** The queue was full and the newcomer could displace nobody. */
  public void queueFull(int priority) {
    Counter.builder("kvrouter.queue.rejected")
        .description("Requests refused with 429 because the router queue was full")
        .tag("priority", Integer.toString(priority))
        .register(registry)
        .increment();
  }

  /**
   * A stream's first byte arrived: the tracker predicted {@code predictedMillis} from the decision,
   * it took {@code observedMillis} from sending.
   */
  public void ttft(double predictedMillis, double observedMillis) {
    if (Double.isNaN(predictedMillis)) {
      return;
    }
    ttftTimer("kvrouter.ttft.predicted", "TTFT the tracker predicted for routed streams")
        .record(Duration.ofNanos((long) (predictedMillis * 1e6)));
    ttftTimer("kvrouter.ttft.observed", "TTFT observed (send to first byte) for the same streams")
        .record(Duration.ofNanos((long) (observedMillis * 1e6)));
    DistributionSummary.builder("kvrouter.ttft.prediction.ratio")
        .description("Observed over predicted TTFT per stream (1 is a perfect prediction)")
        .serviceLevelObjectives(0.5, 0.8, 1.0, 1.25, 2, 4)
        .register(registry)
        .record(observedMillis / Math.max(1e-3, predictedMillis));
  }

  private Timer ttftTimer(String name, String description) {
    return LatencyTimers.histogram(
        registry, name, description, Duration.ofMillis(1), Duration.ofSeconds(60));
  }

  /** A request with a TTFT target: {@code met}, {@code missed} or {@code rejected}. */
  public void slo(String outcome) {
    Counter.builder("kvrouter.slo.requests")
        .description("Requests with a TTFT target, by outcome")
        .tag("outcome", outcome)
        .register(registry)
        .increment();
  }
}

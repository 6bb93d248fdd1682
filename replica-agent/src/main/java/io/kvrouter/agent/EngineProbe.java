package io.kvrouter.agent;

import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.metrics.PrometheusText;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * Asynchronous health check and load scrape of one engine over HTTP: {@code GET /health} and {@code
 * GET /metrics} (vLLM names; TGI's {@code tgi_cache_*} as fallback for the prefix counters).
 * Non-blocking (java.net.http async); thread-safe.
 */
public final class EngineProbe {

  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private final String baseUrl;
  private final Duration timeout;

  public EngineProbe(String baseUrl, Duration timeout) {
    this.baseUrl = baseUrl;
    this.timeout = timeout;
  }

  /** Completes with true on a 2xx from /health, false on anything else (never fails). */
  public CompletionStage<Boolean> healthy() {
    return CLIENT
        .sendAsync(request("/health"), HttpResponse.BodyHandlers.discarding())
        .handle((r, e) -> e == null && r.statusCode() / 100 == 2);
  }

  /** Scrapes /metrics into a load heartbeat; fails when the engine does not answer. */
  public CompletionStage<ReplicaLoad> load(String replicaId, long epoch) {
    return CLIENT
        .sendAsync(request("/metrics"), HttpResponse.BodyHandlers.ofString())
        .thenApply(
            r -> {
              if (r.statusCode() != 200) {
                throw new IllegalStateException("/metrics answered " + r.statusCode());
              }
              return toLoad(
                  replicaId,
                  epoch,
                  PrometheusText.parse(r.body()).sums(),
                  System.currentTimeMillis());
            });
  }

  /** Maps scraped metrics to a heartbeat (missing metrics read as 0). */
  static ReplicaLoad toLoad(String replicaId, long epoch, Map<String, Double> m, long now) {
    double queries =
        m.getOrDefault("vllm:prefix_cache_queries_total", m.getOrDefault("tgi_cache_total", 0.0));
    double hits =
        m.getOrDefault("vllm:prefix_cache_hits_total", m.getOrDefault("tgi_cache_hit", 0.0));
    return new ReplicaLoad(
        replicaId,
        epoch,
        (int) (double) m.getOrDefault("vllm:num_requests_running", 0.0),
        (int) (double) m.getOrDefault("vllm:num_requests_waiting", 0.0),
        m.getOrDefault("vllm:kv_cache_usage_perc", 0.0),
        (long) queries,
        (long) hits,
        now);
  }

  private HttpRequest request(String path) {
    return HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(timeout).GET().build();
  }
}

package io.kvrouter.agent;

import io.kvrouter.agent.sim.PrometheusText;
import io.kvrouter.protocol.ReplicaLoad;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * Asynchronous HTTP access to one engine: {@code GET /health}, {@code GET /metrics} (vLLM names;
 * TGI's {@code tgi_cache_*} as fallback for the prefix counters; the process start time that
 * Python's prometheus_client exports by default) and the alignment probe's {@code POST
 * /v1/completions}. Non-blocking (java.net.http async); thread-safe.
 */
public final class EngineProbe {

  /** The metric Python's prometheus_client exports for the process (not in multiprocess mode). */
  static final String START_TIME = "process_start_time_seconds";

  /**
   * One /metrics scrape.
   *
   * @param load the load heartbeat
   * @param processStartSeconds the engine process's start time, NaN when /metrics has none
   */
  public record Scrape(ReplicaLoad load, double processStartSeconds) {}

  private final HttpClient client;
  private final String baseUrl;
  private final Duration timeout;

  /**
   * @param baseUrl the engine's base URL
   * @param timeout longest wait for the connection and for each answer
   */
  public EngineProbe(String baseUrl, Duration timeout) {
    this.client = HttpClient.newBuilder().connectTimeout(timeout).build();
    this.baseUrl = baseUrl;
    this.timeout = timeout;
  }

  /** Completes with true on a 2xx from /health, false on anything else (never fails). */
  public CompletionStage<Boolean> healthy() {
    return client
        .sendAsync(get("/health"), HttpResponse.BodyHandlers.discarding())
        .handle((r, e) -> e == null && r.statusCode() / 100 == 2);
  }

  /** Scrapes /metrics; fails when the engine does not answer 200. */
  public CompletionStage<Scrape> scrape(String replicaId, long epoch) {
    return client
        .sendAsync(get("/metrics"), HttpResponse.BodyHandlers.ofString())
        .thenApply(
            r -> {
              if (r.statusCode() != 200) {
                throw new IllegalStateException("/metrics answered " + r.statusCode());
              }
              Map<String, Double> m = PrometheusText.parse(r.body());
              return new Scrape(
                  toLoad(replicaId, epoch, m, System.currentTimeMillis()),
                  m.getOrDefault(START_TIME, Double.NaN));
            });
  }

  /**
   * Posts a completion request.
   *
   * @param json the request body
   * @param wait longest wait for the whole answer
   * @return the status and body (fails when the engine does not answer)
   */
  public CompletionStage<HttpResponse<String>> complete(String json, Duration wait) {
    return client.sendAsync(
        HttpRequest.newBuilder(URI.create(baseUrl + "/v1/completions"))
            .timeout(wait)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build(),
        HttpResponse.BodyHandlers.ofString());
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

  private HttpRequest get(String path) {
    return HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(timeout).GET().build();
  }
}

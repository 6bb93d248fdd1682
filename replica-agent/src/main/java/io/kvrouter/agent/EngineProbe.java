package io.kvrouter.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.metrics.PrometheusText;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Asynchronous health check, load scrape and API discovery of one engine over HTTP: {@code GET
 * /health}, {@code GET /metrics} (vLLM names; TGI's {@code tgi_cache_*} as fallback for the prefix
 * counters) and {@code GET /openapi.json}. Non-blocking (java.net.http async); thread-safe.
 *
 * <p>API discovery: vLLM's server is a FastAPI application, which publishes the OpenAPI document of
 * every route it mounted at {@code /openapi.json} (unless started with {@code
 * --disable-fastapi-docs}); the Anthropic routes ({@code /v1/messages}, {@code
 * /v1/messages/count_tokens}) and the Responses routes ({@code /v1/responses}) are mounted only on
 * builds and models that serve them (vllm-project/vllm {@code
 * vllm/entrypoints/openai/api_server.py} {@code build_app}, {@code
 * vllm/entrypoints/generate/api_router.py}). So the document's {@code paths} say which of those
 * APIs the engine speaks.
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

  /** The APIs beyond OpenAI chat and completions that the router can use, when it asks. */
  static final List<String> KNOWN_APIS =
      List.of(ReplicaInfo.MESSAGES_API, ReplicaInfo.COUNT_TOKENS_API, ReplicaInfo.RESPONSES_API);

  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * Which of {@link #KNOWN_APIS} the engine serves, from its {@code /openapi.json}. Completes with
   * a list (empty when the engine publishes no document, or one without them) once the engine
   * answered at all, and with empty when it did not answer (ask again later); never fails.
   */
  public CompletionStage<Optional<List<String>>> apis() {
    return CLIENT
        .sendAsync(request("/openapi.json"), HttpResponse.BodyHandlers.ofString())
        .handle(
            (r, e) -> {
              if (e != null) {
                return Optional.<List<String>>empty();
              }
              return Optional.of(r.statusCode() == 200 ? servedApis(r.body()) : List.<String>of());
            });
  }

  /** The known APIs listed in an OpenAPI document's {@code paths}; none when it is not one. */
  static List<String> servedApis(String openApiDocument) {
    JsonNode paths;
    try {
      paths = JSON.readTree(openApiDocument).path("paths");
    } catch (Exception notJson) {
      return List.of();
    }
    List<String> served = new ArrayList<>();
    for (String api : KNOWN_APIS) {
      if (paths.has(api)) {
        served.add(api);
      }
    }
    return List.copyOf(served);
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

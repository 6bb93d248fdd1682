package io.kvrouter.loadtest.bench;

import io.kvrouter.protocol.metrics.PrometheusText;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;

/**
 * Scrapes engines' Prometheus endpoints for the prefix-cache counters, so a run can report the hit
 * rate the engines themselves saw (Δhits / Δqueries between a scrape before and one after).
 *
 * <p>Contract: {@link #scrape} never throws for network or format problems; it returns a snapshot
 * with {@link EngineSnapshot#error()} set. A URL without a path gets {@code /metrics} appended.
 * Scrapes run one after another (a handful of engines, milliseconds each). Thread-safe.
 */
public final class EngineMetricsScraper {

  static final String[] QUERIES = {
    "vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"
  };
  static final String[] HITS = {"vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"};
  static final String REQUEST_SUCCESS = "vllm:request_success_total";

  private final HttpClient client;
  private final Duration timeout;

  public EngineMetricsScraper(HttpClient client, Duration timeout) {
    this.client = client;
    this.timeout = timeout;
  }

  /** Scrapes every URL in order. */
  public List<EngineSnapshot> scrapeAll(List<URI> urls) throws InterruptedException {
    List<EngineSnapshot> out = new ArrayList<>(urls.size());
    for (URI u : urls) {
      out.add(scrape(u));
    }
    return out;
  }

  /** Scrapes one engine. */
  public EngineSnapshot scrape(URI url) throws InterruptedException {
    URI target = metricsUri(url);
    try {
      HttpResponse<String> r =
          client.send(
              HttpRequest.newBuilder(target).timeout(timeout).GET().build(),
              HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() != 200) {
        return new EngineSnapshot(url, "HTTP " + r.statusCode(), null, null, null);
      }
      return fromText(url, r.body());
    } catch (IOException | IllegalArgumentException e) {
      return new EngineSnapshot(
          url, e.getClass().getSimpleName() + ": " + e.getMessage(), null, null, null);
    }
  }

  /** The snapshot a scrape body gives. */
  static EngineSnapshot fromText(URI url, String body) {
    PrometheusText.Parsed parsed = PrometheusText.parse(body);
    return new EngineSnapshot(
        url,
        null,
        boxed(parsed.sumFirst(QUERIES)),
        boxed(parsed.sumFirst(HITS)),
        boxed(parsed.sum(REQUEST_SUCCESS)));
  }

  /** {@code url}, with {@code /metrics} appended when it has no path. */
  static URI metricsUri(URI url) {
    String path = url.getPath();
    if (path == null || path.isEmpty() || path.equals("/")) {
      return URI.create(BenchEndpoint.root(url) + "/metrics");
    }
    return url;
  }

  private static Double boxed(OptionalDouble v) {
    return v.isPresent() ? v.getAsDouble() : null;
  }
}

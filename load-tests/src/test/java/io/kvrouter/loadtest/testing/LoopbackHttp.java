package io.kvrouter.loadtest.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.loadtest.bench.PrometheusText;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** The HTTP calls the end-to-end tests make against loopback ingresses and engines. */
public final class LoopbackHttp {

  public static final ObjectMapper JSON = new ObjectMapper();
  public static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private LoopbackHttp() {}

  /** POSTs a JSON body; any status is returned. */
  public static HttpResponse<String> post(String url, String json) throws Exception {
    return CLIENT.send(
        HttpRequest.newBuilder(URI.create(url))
            .timeout(Duration.ofSeconds(60))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** GETs a page; any status is returned. */
  public static HttpResponse<String> get(String url) throws Exception {
    return CLIENT.send(
        HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /**
   * The sum of every sample of the named metrics at {@code baseUrl}/metrics (Prometheus text; e.g.
   * an ingress's {@code kvrouter_retries_total} or an engine's {@code vllm:num_requests_running});
   * 0 for metrics not exported.
   */
  public static double metric(String baseUrl, String... names) throws Exception {
    PrometheusText.Parsed parsed = PrometheusText.parse(get(baseUrl + "/metrics").body());
    double sum = 0;
    for (String name : names) {
      sum += parsed.sum(name).orElse(0);
    }
    return sum;
  }

  /** GETs a JSON document. */
  public static JsonNode getJson(String url) throws Exception {
    return JSON.readTree(get(url).body());
  }
}

package io.kvrouter.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.protocol.metrics.PrometheusText;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * The HTTP calls tests make against loopback ingresses and engines, for every module's tests (the
 * testkit module, a test-scope dependency). Any status is returned; callers assert on it.
 */
public final class LoopbackHttp {

  public static final ObjectMapper JSON = new ObjectMapper();
  public static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private LoopbackHttp() {}

  /** POSTs a JSON body. */
  public static HttpResponse<String> post(String url, String json) throws Exception {
    return CLIENT.send(
        HttpRequest.newBuilder(URI.create(url))
            .timeout(Duration.ofSeconds(60))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** POSTs a JSON document. */
  public static HttpResponse<String> post(String url, JsonNode body) throws Exception {
    return post(url, body.toString());
  }

  /** POSTs a JSON body whose answer is read as it streams ({@link #sseData}). */
  public static HttpResponse<InputStream> postForStream(String url, String json, Duration timeout)
      throws Exception {
    return CLIENT.send(
        HttpRequest.newBuilder(URI.create(url))
            .timeout(timeout)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build(),
        HttpResponse.BodyHandlers.ofInputStream());
  }

  /**
   * Reads a server-sent event stream to its end, handing the data of each {@code data:} line
   * ({@code [DONE]} included) to {@code onData} as it arrives.
   */
  public static void sseData(InputStream body, Consumer<String> onData) throws IOException {
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8))) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.startsWith("data: ")) {
          onData.accept(line.substring(6));
        }
      }
    }
  }

  /** GETs a page, with the given header name/value pairs. */
  public static HttpResponse<String> get(String url, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10));
    if (headers.length > 0) {
      b.headers(headers);
    }
    return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** GETs a JSON document. */
  public static JsonNode getJson(String url) throws Exception {
    return JSON.readTree(get(url).body());
  }

  /** GETs a page that must answer 200, and returns its body. */
  public static String getOk(String url) throws Exception {
    HttpResponse<String> r = get(url);
    if (r.statusCode() != 200) {
      throw new IllegalStateException("GET " + url + ": " + r.statusCode() + " " + r.body());
    }
    return r.body();
  }

  /** The status of a GET. */
  public static int status(String url) throws Exception {
    return get(url).statusCode();
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
}

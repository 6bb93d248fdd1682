package io.kvrouter.loadtest.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Finds a model name when the user gave none: the first {@code data[].id} of {@code GET /v1/models}
 * (the OpenAI list shape vLLM's {@code vllm/entrypoints/openai} server returns). One blocking
 * request; stateless.
 */
final class ModelDiscovery {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private ModelDiscovery() {}

  /**
   * The first model id served at {@code base}.
   *
   * @throws IllegalStateException if the list cannot be fetched or is empty
   */
  static String firstModel(HttpClient client, URI base, String apiKey, Duration timeout)
      throws InterruptedException {
    URI uri = URI.create(BenchEndpoint.root(base) + "/v1/models");
    HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(timeout).GET();
    if (apiKey != null) {
      b.header("Authorization", "Bearer " + apiKey);
    }
    try {
      HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() != 200) {
        throw new IllegalStateException(
            "GET " + uri + " answered HTTP " + r.statusCode() + "; give --model");
      }
      JsonNode data = MAPPER.readTree(r.body()).path("data");
      if (!data.isArray() || data.isEmpty() || !data.get(0).path("id").isTextual()) {
        throw new IllegalStateException("GET " + uri + " lists no model; give --model");
      }
      return data.get(0).path("id").asText();
    } catch (IOException e) {
      throw new IllegalStateException(
          "GET " + uri + " failed (" + e.getMessage() + "); give --model", e);
    }
  }
}

package io.kvrouter.sim;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.protocol.metrics.PrometheusText;
import io.kvrouter.testing.LoopbackHttp;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class SimHttpServerTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static SimEngine engine;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeAll
  static void start() throws Exception {
    engine =
        SimEngine.start(
            SimEngineSettings.loopback()
                .withModel("m")
                .withEndpoints(0, null, null)
                .withEngine(
                    SimEngineConfig.defaults()
                        .withNumBlocks(256)
                        .withTiming(new MockerTimingModel(20))));
  }

  @AfterAll
  static void stop() {
    engine.close();
  }

  private HttpResponse<String> post(String path, String body) throws Exception {
    return LoopbackHttp.post(engine.baseUrl() + path, body);
  }

  private HttpResponse<String> get(String path) throws Exception {
    return LoopbackHttp.get(engine.baseUrl() + path);
  }

  /** The data payloads of an SSE response, read line by line as they arrive. */
  private List<String> sse(String path, String body) throws Exception {
    HttpResponse<java.io.InputStream> r =
        http.send(
            HttpRequest.newBuilder(URI.create(engine.baseUrl() + path))
                .timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofInputStream());
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("content-type")).hasValue("text/event-stream");
    List<String> data = new ArrayList<>();
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        if (line.startsWith("data: ")) {
          data.add(line.substring(6));
        } else {
          assertThat(line).as("frames are separated by blank lines").isEmpty();
        }
      }
    }
    return data;
  }

  private static String longPrompt(String seed) {
    return (seed + " the quick brown fox jumps over the lazy dog. ").repeat(8);
  }

  @Test
  void completion_reportsUsage_andTheSameLongPromptHitsTheCacheTheSecondTime() throws Exception {
    String prompt = longPrompt("alpha");
    String body = "{\"model\":\"m\",\"prompt\":\"" + prompt + "\",\"max_tokens\":5}";
    JsonNode first = JSON.readTree(post("/v1/completions", body).body());
    assertThat(first.path("object").asText()).isEqualTo("text_completion");
    assertThat(first.path("choices").get(0).path("text").asText()).hasSize(5);
    assertThat(first.path("choices").get(0).path("finish_reason").asText()).isEqualTo("length");
    JsonNode u1 = first.path("usage");
    int promptTokens = prompt.getBytes(StandardCharsets.UTF_8).length;
    assertThat(u1.path("prompt_tokens").asInt()).isEqualTo(promptTokens);
    assertThat(u1.path("completion_tokens").asInt()).isEqualTo(5);
    assertThat(u1.path("total_tokens").asInt()).isEqualTo(promptTokens + 5);
    assertThat(u1.path("prompt_tokens_details").path("cached_tokens").asInt()).isZero();
    double hitsBefore = metrics().get("vllm:prefix_cache_hits_total");
    JsonNode second = JSON.readTree(post("/v1/completions", body).body());
    assertThat(second.path("usage").path("prompt_tokens_details").path("cached_tokens").asInt())
        .isEqualTo((promptTokens - 1) / 16 * 16);
    Map<String, Double> m = metrics();
    assertThat(m.get("vllm:prefix_cache_hits_total")).isGreaterThan(hitsBefore);
    assertThat(m.get("tgi_cache_hit")).isEqualTo(m.get("vllm:prefix_cache_hits_total"));
    assertThat(m.get("tgi_cache_total")).isEqualTo(m.get("vllm:prefix_cache_queries_total"));
    assertThat(m)
        .containsKeys(
            "vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc");
  }

  private Map<String, Double> metrics() throws Exception {
    HttpResponse<String> r = get("/metrics");
    assertThat(r.statusCode()).isEqualTo(200);
    return PrometheusText.parse(r.body()).sums();
  }

  @Test
  void tokenIdPrompt_isServedAsIs() throws Exception {
    JsonNode r =
        JSON.readTree(
            post("/v1/completions", "{\"prompt\":[5,6,7,100000],\"max_tokens\":2}").body());
    assertThat(r.path("usage").path("prompt_tokens").asInt()).isEqualTo(4);
  }

  @Test
  void streamingCompletion_sendsOneChunkPerTokenThenUsageThenDone() throws Exception {
    List<String> data =
        sse(
            "/v1/completions",
            "{\"prompt\":\""
                + longPrompt("beta")
                + "\",\"max_tokens\":4,\"stream\":true,"
                + "\"stream_options\":{\"include_usage\":true}}");
    assertThat(data).hasSize(6);
    assertThat(data.get(5)).isEqualTo("[DONE]");
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < 4; i++) {
      JsonNode c = JSON.readTree(data.get(i));
      assertThat(c.path("object").asText()).isEqualTo("text_completion");
      text.append(c.path("choices").get(0).path("text").asText());
      assertThat(c.path("choices").get(0).path("finish_reason").isNull()).isEqualTo(i < 3);
    }
    assertThat(text).hasSize(4);
    JsonNode usage = JSON.readTree(data.get(4));
    assertThat(usage.path("choices")).isEmpty();
    assertThat(usage.path("usage").path("completion_tokens").asInt()).isEqualTo(4);
  }

  @Test
  void streamingChat_startsWithRoleDeltaAndEndsWithDone_withoutUsageUnlessAsked() throws Exception {
    List<String> data =
        sse(
            "/v1/chat/completions",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                + "\"max_tokens\":3,\"stream\":true}");
    assertThat(data).hasSize(5);
    JsonNode role = JSON.readTree(data.get(0));
    assertThat(role.path("object").asText()).isEqualTo("chat.completion.chunk");
    assertThat(role.path("choices").get(0).path("delta").path("role").asText())
        .isEqualTo("assistant");
    assertThat(JSON.readTree(data.get(3)).path("choices").get(0).path("finish_reason").asText())
        .isEqualTo("length");
    assertThat(data.get(4)).isEqualTo("[DONE]");
  }

  @Test
  void chat_nonStreaming_countsTemplatedPromptTokens() throws Exception {
    JsonNode r =
        JSON.readTree(
            post(
                    "/v1/chat/completions",
                    "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_completion_tokens\":2}")
                .body());
    assertThat(r.path("object").asText()).isEqualTo("chat.completion");
    assertThat(r.path("choices").get(0).path("message").path("role").asText())
        .isEqualTo("assistant");
    int expected = "<|user|>\nhi\n<|assistant|>\n".length();
    assertThat(r.path("usage").path("prompt_tokens").asInt()).isEqualTo(expected);
    JsonNode tok =
        JSON.readTree(
            post("/tokenize", "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}").body());
    assertThat(tok.path("count").asInt()).isEqualTo(expected);
  }

  @Test
  void badInput_getsOpenAiErrorObjectsWith4xx() throws Exception {
    assertError(post("/v1/completions", "{\"max_tokens\":3}"), 400, "prompt");
    assertError(post("/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":-1}"), 400, "max_tokens");
    assertError(post("/v1/completions", "{not json"), 400, null);
    assertError(post("/v1/completions", "{\"model\":\"other\",\"prompt\":\"x\"}"), 404, "model");
    assertError(post("/v1/chat/completions", "{\"messages\":[]}"), 400, "messages");
    assertError(post("/v1/completions", "{\"prompt\":[1,-2]}"), 400, "prompt");
    // longer than the model's 4096 tokens: the engine rejects it
    assertError(
        post("/v1/completions", "{\"prompt\":\"" + "x".repeat(5000) + "\"}"), 400, "prompt");
    assertError(get("/v1/nothing"), 404, null);
    assertError(get("/v1/completions"), 405, null);
  }

  private static void assertError(HttpResponse<String> r, int status, String param)
      throws Exception {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
    JsonNode err = JSON.readTree(r.body()).path("error");
    assertThat(err.path("message").asText()).isNotBlank();
    assertThat(err.has("type")).isTrue();
    assertThat(err.path("code").asInt()).isEqualTo(status);
    assertThat(err.has("param")).isTrue();
    if (param != null) {
      assertThat(err.path("param").asText()).isEqualTo(param);
    }
  }

  @Test
  void modelsHealthVersionAndTokenize_answerLikeVllm() throws Exception {
    JsonNode models = JSON.readTree(get("/v1/models").body());
    assertThat(models.path("data").get(0).path("id").asText()).isEqualTo("m");
    assertThat(models.path("data").get(0).path("max_model_len").asInt()).isEqualTo(4096);
    assertThat(get("/health").statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(get("/version").body()).path("version").asText())
        .isEqualTo(SimHttpServer.VERSION);
    assertThat(PrometheusText.parse(get("/metrics").body()).samples())
        .filteredOn(sample -> sample.name().equals("vllm:cache_config_info"))
        .singleElement()
        .satisfies(
            info ->
                assertThat(info.labels())
                    .containsEntry("block_size", "16")
                    .containsEntry("prefix_caching_hash_algo", "sha256_cbor")
                    .containsEntry("engine", "0"));
    JsonNode tok = JSON.readTree(post("/tokenize", "{\"prompt\":\"ab\"}").body());
    assertThat(tok.path("tokens")).hasSize(2);
    assertThat(tok.path("tokens").get(0).asInt()).isEqualTo('a');
    JsonNode detok = JSON.readTree(post("/detokenize", "{\"tokens\":[104,105]}").body());
    assertThat(detok.path("prompt").asText()).isEqualTo("hi");
  }
}

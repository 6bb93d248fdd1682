package io.kvrouter.sim;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The simulated engine's agent-facing APIs, held to what vLLM does: routes advertised in {@code
 * /openapi.json}, deterministic tool calls, tool-call arguments normalized before rendering,
 * Anthropic messages with cache usage, Responses with and without the store.
 */
class SimAgentApisTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static SimEngine vllm;
  private static SimEngine chatOnly;
  private final HttpClient http = HttpClient.newHttpClient();

  private static final String TOOLS =
      "[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
          + "\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"},"
          + "\"days\":{\"type\":\"integer\"}},\"required\":[\"city\"]}}}]";

  /**
   * Renders a chat request as the JSON of its messages and tools, so everything a template could
   * read (tool calls, their arguments) reaches the prompt.
   */
  private static final SimTokenizer RENDERS_JSON =
      new SimTokenizer() {
        @Override
        public int[] encodePrompt(String text) {
          return ByteTokenizer.encode(text);
        }

        @Override
        public int[] encodeChat(JsonNode body, boolean addGenerationPrompt) {
          return ByteTokenizer.encode(body.get("messages") + "" + body.path("tools"));
        }

        @Override
        public String decode(int[] ids) {
          return ByteTokenizer.decode(ids);
        }
      };

  @BeforeAll
  static void start() throws Exception {
    SimEngineSettings s =
        SimEngineSettings.loopback()
            .withModel("m")
            .withEndpoints(0, null, null)
            .withEngine(
                SimEngineConfig.defaults()
                    .withNumBlocks(256)
                    .withTiming(new MockerTimingModel(50)));
    vllm =
        SimEngine.start(
            s.withApis(SimApis.vllm().withResponsesStore(true)).withTokenizer(RENDERS_JSON));
    chatOnly = SimEngine.start(s.withApis(SimApis.chatOnly()));
  }

  @AfterAll
  static void stop() {
    vllm.close();
    chatOnly.close();
  }

  private JsonNode post(SimEngine e, String path, String body, int status) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(e.baseUrl() + path))
                .timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
    return JSON.readTree(r.body());
  }

  private JsonNode get(SimEngine e, String path) throws Exception {
    return JSON.readTree(
        http.send(
                HttpRequest.newBuilder(URI.create(e.baseUrl() + path)).GET().build(),
                HttpResponse.BodyHandlers.ofString())
            .body());
  }

  @Test
  void openApiDocument_listsTheAnthropicAndResponsesRoutes_onlyWhereServed() throws Exception {
    assertThat(get(vllm, "/openapi.json").path("paths").has("/v1/messages")).isTrue();
    assertThat(get(vllm, "/openapi.json").path("paths").has("/v1/responses")).isTrue();
    assertThat(get(chatOnly, "/openapi.json").path("paths").has("/v1/messages")).isFalse();
    JsonNode refused =
        post(chatOnly, "/v1/messages", "{\"model\":\"m\",\"max_tokens\":2,\"messages\":[]}", 404);
    assertThat(refused.path("type").asText()).isEqualTo("error");
  }

  @Test
  void chatTurnNamingATool_isAnsweredWithACallToIt_andAToolResultWithText() throws Exception {
    JsonNode call =
        post(
            vllm,
            "/v1/chat/completions",
            "{\"model\":\"m\",\"max_tokens\":20,\"tools\":"
                + TOOLS
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"use get_weather\"}]}",
            200);
    JsonNode choice = call.path("choices").path(0);
    assertThat(choice.path("finish_reason").asText()).isEqualTo("tool_calls");
    JsonNode fn = choice.path("message").path("tool_calls").path(0).path("function");
    assertThat(fn.path("name").asText()).isEqualTo("get_weather");
    assertThat(JSON.readTree(fn.path("arguments").asText()))
        .isEqualTo(JSON.readTree("{\"city\":\"sim\"}"));
    assertThat(call.path("usage").path("completion_tokens").asInt())
        .as("the call's tokens, not max_tokens")
        .isLessThan(20);

    JsonNode answer =
        post(
            vllm,
            "/v1/chat/completions",
            "{\"model\":\"m\",\"max_tokens\":3,\"tools\":"
                + TOOLS
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"use get_weather\"},"
                + "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c\",\"type\":\"function\","
                + "\"function\":{\"name\":\"get_weather\",\"arguments\":\"{}\"}}]},"
                + "{\"role\":\"tool\",\"tool_call_id\":\"c\",\"content\":\"18C\"}]}",
            200);
    assertThat(answer.path("choices").path(0).path("finish_reason").asText()).isEqualTo("length");
    JsonNode log = get(vllm, "/sim/requests").path("requests");
    assertThat(log.get(log.size() - 1).path("roles").toString())
        .isEqualTo("[\"user\",\"assistant\",\"tool\"]");
  }

  @Test
  void toolCallArgumentsAsTextOrObject_renderTheSamePrompt_asVllmParsesThem() throws Exception {
    String template =
        "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"},"
            + "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c\",\"type\":\"function\","
            + "\"function\":{\"name\":\"f\",\"arguments\":ARGS}}]}]}";
    JsonNode text = post(vllm, "/tokenize", template.replace("ARGS", "\"{\\\"a\\\":1}\""), 200);
    JsonNode object = post(vllm, "/tokenize", template.replace("ARGS", "{\"a\": 1}"), 200);
    assertThat(text.path("tokens")).isEqualTo(object.path("tokens"));
  }

  @Test
  void anthropicMessage_reportsCacheReadsAsVllm_andCallsTools() throws Exception {
    String body =
        "{\"model\":\"m\",\"max_tokens\":4,\"system\":\""
            + "a long and stable system prompt ".repeat(8)
            + "\",\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}]}";
    JsonNode first = post(vllm, "/v1/messages", body, 200);
    JsonNode second = post(vllm, "/v1/messages", body, 200);
    assertThat(first.path("stop_reason").asText()).isEqualTo("max_tokens");
    int prompt =
        first.path("usage").path("input_tokens").asInt()
            + first.path("usage").path("cache_read_input_tokens").asInt();
    assertThat(second.path("usage").path("cache_read_input_tokens").asInt()).isPositive();
    assertThat(
            second.path("usage").path("input_tokens").asInt()
                + second.path("usage").path("cache_read_input_tokens").asInt())
        .isEqualTo(prompt);
    JsonNode count = post(vllm, "/v1/messages/count_tokens", body, 200);
    assertThat(count.path("input_tokens").asInt()).isEqualTo(prompt);

    JsonNode call =
        post(
            vllm,
            "/v1/messages",
            "{\"model\":\"m\",\"max_tokens\":30,\"tool_choice\":{\"type\":\"any\"},"
                + "\"tools\":[{\"name\":\"lookup\",\"input_schema\":{\"properties\":{\"q\":{\"type\":\"string\"}}}}],"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
            200);
    assertThat(call.path("stop_reason").asText()).isEqualTo("tool_use");
    assertThat(call.path("content").path(0).path("input"))
        .isEqualTo(JSON.readTree("{\"q\":\"sim\"}"));
  }

  /**
   * A client continues from a response the moment it has it, as agents do: the response must be in
   * the store by then. The engine used to store it after sending it; 3 of 300 continuations got 404
   * that way (1 Dec), and one failed a clean CI run.
   */
  @Test
  void aResponse_canBeContinuedTheMomentItArrives() throws Exception {
    int notFound = 0;
    for (int i = 0; i < 300; i++) {
      JsonNode first =
          post(
              vllm,
              "/v1/responses",
              "{\"model\":\"m\",\"input\":\"turn " + i + "\",\"max_output_tokens\":1}",
              200);
      HttpResponse<String> next =
          http.send(
              HttpRequest.newBuilder(URI.create(vllm.baseUrl() + "/v1/responses"))
                  .timeout(Duration.ofSeconds(30))
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"model\":\"m\",\"previous_response_id\":\""
                              + first.path("id").asText()
                              + "\",\"input\":\"more\",\"max_output_tokens\":1}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      if (next.statusCode() == 404) {
        notFound++;
      } else {
        assertThat(next.statusCode()).as(next.body()).isEqualTo(200);
      }
    }
    assertThat(notFound).as("continuations answered 404 of 300").isZero();
  }

  @Test
  void responses_continueFromTheStore_andAnEngineWithoutItSaysNotFound() throws Exception {
    JsonNode first =
        post(
            vllm,
            "/v1/responses",
            "{\"model\":\"m\",\"instructions\":\""
                + "stable instructions for the agent ".repeat(6)
                + "\",\"input\":\"hi\",\"max_output_tokens\":3}",
            200);
    assertThat(first.path("status").asText()).isEqualTo("incomplete");
    JsonNode next =
        post(
            vllm,
            "/v1/responses",
            "{\"model\":\"m\",\"previous_response_id\":\""
                + first.path("id").asText()
                + "\",\"input\":\"more\",\"max_output_tokens\":3}",
            200);
    assertThat(next.path("usage").path("input_tokens").asInt())
        .isGreaterThan(first.path("usage").path("input_tokens").asInt());
    assertThat(next.path("usage").path("input_tokens_details").path("cached_tokens").asInt())
        .isPositive();

    SimEngineSettings noStore =
        vllm.settings().withEndpoints(0, null, null).withApis(SimApis.vllm());
    try (SimEngine other = SimEngine.start(noStore)) {
      JsonNode again =
          post(
              other,
              "/v1/responses",
              "{\"model\":\"m\",\"input\":\"hi\",\"max_output_tokens\":2}",
              200);
      post(
          other,
          "/v1/responses",
          "{\"model\":\"m\",\"previous_response_id\":\""
              + again.path("id").asText()
              + "\",\"input\":\"more\"}",
          404);
    }
  }
}

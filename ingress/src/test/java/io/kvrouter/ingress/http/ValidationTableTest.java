package io.kvrouter.ingress.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.routing.Target;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.stream.Stream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every kind of bad input gets the OpenAI (or, on /v1/messages, Anthropic) error object with the
 * right 4xx, and none of them reaches a replica or leaves a reservation behind.
 */
class ValidationTableTest {

  static final ObjectMapper JSON = new ObjectMapper();
  static ActorTestKit kit;
  static TokenizerRegistry tokenizers;
  static FakeRouter router;
  static FakeEngine engine;
  static ServerBinding binding;
  static final HttpClient CLIENT = HttpClient.newHttpClient();

  @BeforeAll
  static void start() throws Exception {
    kit = ActorTestKit.create();
    Config config =
        ConfigFactory.parseString(
                "kvrouter.models.tiny { tokenizer = \"tiktoken:cl100k_base\", max-model-len = 64 }\n"
                    + "kvrouter.ingress { http.host = 127.0.0.1, max-body-bytes = 8k }")
            .withFallback(ConfigFactory.load());
    tokenizers = TokenizerRegistry.fromConfig(config);
    engine = new FakeEngine(FakeEngine.Mode.OK);
    router = new FakeRouter();
    router.targets.add(new Target("r0", engine.url(), true));
    AdminView admin = new StaticAdminView();
    binding =
        IngressFrontend.start(
                kit.system(),
                IngressSettings.fromConfig(config).withPort(0),
                tokenizers,
                router,
                new IngressMetrics(),
                admin)
            .toCompletableFuture()
            .get();
  }

  @AfterAll
  static void stop() throws Exception {
    binding.unbind().toCompletableFuture().get();
    engine.close();
    kit.shutdownTestKit();
    tokenizers.close();
  }

  static Stream<Arguments> badInputs() {
    String big = "x".repeat(9 * 1024);
    String longPrompt = "word ".repeat(200);
    return Stream.of(
        // path, body, status, param, code
        Arguments.of(
            "/v1/completions", "{\"model\":\"tiny\",\"prompt\":", 400, null, "invalid_json"),
        Arguments.of(
            "/v1/completions",
            "{\"model\":\"tiny\",\"prompt\":\"a\"} trailing",
            400,
            null,
            "invalid_json"),
        Arguments.of("/v1/completions", "", 400, null, "empty_body"),
        Arguments.of("/v1/completions", "[1,2]", 400, null, "invalid_type"),
        Arguments.of(
            "/v1/completions", "{\"prompt\":\"hi\"}", 400, "model", "missing_required_parameter"),
        Arguments.of(
            "/v1/completions", "{\"model\":42,\"prompt\":\"hi\"}", 400, "model", "invalid_type"),
        Arguments.of(
            "/v1/completions",
            "{\"model\":\"tiny\",\"prompt\":\"hi\",\"stream\":\"yes\"}",
            400,
            "stream",
            "invalid_type"),
        Arguments.of(
            "/v1/completions",
            "{\"model\":\"tiny\",\"prompt\":{\"a\":1}}",
            400,
            "prompt",
            "invalid_type"),
        Arguments.of(
            "/v1/completions",
            "{\"model\":\"tiny\",\"prompt\":[1,-2]}",
            400,
            "prompt",
            "invalid_type"),
        Arguments.of(
            "/v1/completions",
            "{\"model\":\"tiny\",\"prompt\":[\"a\",\"b\"]}",
            400,
            "prompt",
            "unsupported_batch"),
        Arguments.of(
            "/v1/completions",
            "{\"model\":\"no-such-model\",\"prompt\":\"hi\"}",
            404,
            "model",
            "model_not_found"),
        Arguments.of(
            "/v1/completions",
            "{\"model\":\"tiny\",\"prompt\":\"\"}",
            400,
            "prompt",
            "empty_prompt"),
        Arguments.of(
            "/v1/completions", "{\"model\":\"tiny\",\"prompt\":[]}", 400, "prompt", "empty_prompt"),
        Arguments.of(
            "/v1/completions",
            "{\"model\":\"tiny\",\"prompt\":\"" + longPrompt + "\"}",
            400,
            "prompt",
            "context_length_exceeded"),
        Arguments.of(
            "/v1/completions",
            "{\"model\":\"tiny\",\"prompt\":\"hi\",\"max_tokens\":100}",
            400,
            "max_tokens",
            "context_length_exceeded"),
        Arguments.of(
            "/v1/completions",
            "{\"model\":\"tiny\",\"prompt\":\"hi\",\"max_tokens\":0}",
            400,
            "max_tokens",
            "invalid_value"),
        Arguments.of(
            "/v1/completions",
            "{\"model\":\"tiny\",\"prompt\":\"hi\",\"max_tokens\":99999999999}",
            400,
            "max_tokens",
            "invalid_value"),
        Arguments.of(
            "/v1/completions",
            "{\"model\":\"tiny\",\"prompt\":\"hi\",\"max_tokens\":1.5}",
            400,
            "max_tokens",
            "invalid_type"),
        Arguments.of(
            "/v1/completions",
            "{\"model\":\"tiny\",\"prompt\":\"" + big + "\"}",
            413,
            null,
            "request_too_large"),
        Arguments.of(
            "/v1/chat/completions",
            "{\"model\":\"tiny\"}",
            400,
            "messages",
            "missing_required_parameter"),
        Arguments.of(
            "/v1/chat/completions",
            "{\"model\":\"tiny\",\"messages\":[]}",
            400,
            "messages",
            "empty_prompt"),
        Arguments.of(
            "/v1/chat/completions",
            "{\"model\":\"tiny\",\"messages\":\"hi\"}",
            400,
            "messages",
            "invalid_type"),
        Arguments.of(
            "/v1/chat/completions",
            "{\"model\":\"tiny\",\"messages\":[{\"role\":\"wizard\",\"content\":\"hi\"}]}",
            400,
            "messages[0].role",
            "invalid_value"),
        Arguments.of(
            "/v1/chat/completions",
            "{\"model\":\"tiny\",\"messages\":[{\"role\":\"user\",\"content\":7}]}",
            400,
            "messages[0].content",
            "invalid_type"),
        Arguments.of(
            "/v1/chat/completions",
            "{\"model\":\"tiny\",\"messages\":[{\"role\":\"user\",\"content\":\""
                + longPrompt
                + "\"}]}",
            400,
            "messages",
            "context_length_exceeded"),
        Arguments.of(
            "/v1/messages",
            "{\"model\":\"tiny\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
            400,
            null,
            null),
        Arguments.of(
            "/v1/messages",
            "{\"model\":\"tiny\",\"max_tokens\":8,\"messages\":[{\"role\":\"system\",\"content\":\"hi\"}]}",
            400,
            null,
            null));
  }

  @ParameterizedTest(name = "{0} {1} -> {2}")
  @MethodSource("badInputs")
  void badInput_getsTheErrorObject_andNeverReachesAReplica(
      String path, String body, int status, String param, String code) throws Exception {
    int before = router.queries.size();
    HttpResponse<String> r =
        CLIENT.send(
            HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + binding.localAddress().getPort() + path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());

    assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
    JsonNode json = JSON.readTree(r.body());
    if (path.equals("/v1/messages")) {
      assertThat(json.path("type").asText()).isEqualTo("error");
      assertThat(json.path("error").path("type").asText()).isEqualTo("invalid_request_error");
      assertThat(json.path("error").path("message").asText()).isNotBlank();
    } else {
      JsonNode error = json.path("error");
      assertThat(error.isObject()).isTrue();
      assertThat(error.path("message").asText()).isNotBlank();
      assertThat(error.path("type").asText()).isEqualTo("invalid_request_error");
      assertThat(error.has("param")).isTrue();
      assertThat(error.has("code")).isTrue();
      assertThat(error.path("param").isNull() ? null : error.path("param").asText())
          .isEqualTo(param);
      assertThat(error.path("code").asText()).isEqualTo(code);
    }
    assertThat(router.queries).as("no routing decision").hasSize(before);
    assertThat(engine.bodies).as("nothing reached a replica").isEmpty();
    assertThat(router.open).isEmpty();
  }

  @org.junit.jupiter.api.Test
  void invalidUtf8_isRejectedWith400() throws Exception {
    byte[] body =
        "{\"model\":\"tiny\",\"prompt\":\"hi \u00ff\"}"
            .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
    HttpResponse<String> r =
        CLIENT.send(
            HttpRequest.newBuilder(
                    URI.create(
                        "http://127.0.0.1:" + binding.localAddress().getPort() + "/v1/completions"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(r.body()).path("error").path("code").asText())
        .isEqualTo("invalid_encoding");
    assertThat(engine.bodies).isEmpty();
  }
}

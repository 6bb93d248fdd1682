package io.kvrouter.ingress.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.stream.Stream;
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
  static ValidatingIngress ingress;
  static FakeRouter router;
  static FakeEngine engine;

  @BeforeAll
  static void start() throws Exception {
    ingress = new ValidatingIngress(64, "8k", List.of());
    router = ingress.router;
    engine = ingress.engine;
  }

  @AfterAll
  static void stop() throws Exception {
    ingress.close();
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
            "/v1/completions",
            "{\"model\":\"tiny\",\"prompt\":\"hi\",\"max_tokens\":4,\"temperature\":\"hot\"}",
            400,
            "temperature",
            "invalid_type"),
        Arguments.of(
            "/v1/completions",
            "{\"model\":\"tiny\",\"prompt\":\"hi\",\"max_tokens\":4,\"stop\":[\"a\",7]}",
            400,
            "stop",
            "invalid_type"),
        Arguments.of(
            "/v1/chat/completions",
            "{\"model\":\"tiny\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                + "\"max_tokens\":4,\"logprobs\":\"many\"}",
            400,
            "logprobs",
            "invalid_type"),
        Arguments.of(
            "/v1/chat/completions",
            "{\"model\":\"tiny\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                + "\"max_tokens\":4,\"logit_bias\":{\"5\":\"up\"}}",
            400,
            "logit_bias",
            "invalid_type"),
        Arguments.of(
            "/v1/responses",
            "{\"model\":\"tiny\",\"input\":\"hi\",\"top_p\":[1]}",
            400,
            "top_p",
            "invalid_type"),
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
    HttpResponse<String> r = ingress.post(path, body);

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
  void samplingParametersAsPydanticAcceptsThem_passToTheEngine() throws Exception {
    HttpResponse<String> r =
        ingress.post(
            "/v1/completions",
            "{\"model\":\"tiny\",\"prompt\":\"hi\",\"max_tokens\":2,\"temperature\":\"0.5\","
                + "\"n\":1.0,\"ignore_eos\":\"true\",\"stop\":\"x\",\"seed\":null}");
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(engine.bodies).hasSize(1);
    engine.bodies.clear();
  }

  /**
   * A body declared longer than Pekko HTTP's own read limit ({@code max-to-strict-bytes}, 8 MiB)
   * was answered 500 "EntityStreamException: Request too large"; over the configured limit is 413,
   * in the endpoint's protocol.
   */
  @ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.ValueSource(
      strings = {"/v1/completions", "/v1/messages", "/v1/responses"})
  void bodyOverEveryLimit_is413WithTheProtocolsErrorObject(String path) throws Exception {
    // The body is declared (9 MiB) but only its first bytes are sent: the verdict must come from
    // the declared length, and a client still writing would race the server's early answer.
    String status;
    String answer;
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", ingress.port())) {
      socket.setSoTimeout(30_000);
      var out = socket.getOutputStream();
      out.write(
          ("POST "
                  + path
                  + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  + "Content-Length: "
                  + (9 << 20)
                  + "\r\n\r\n{\"model\":\"tiny\",\"prompt\":\"xxxx")
              .getBytes(java.nio.charset.StandardCharsets.UTF_8));
      out.flush();
      var in =
          new java.io.BufferedReader(
              new java.io.InputStreamReader(
                  socket.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
      status = in.readLine();
      int length = 0;
      String line;
      while ((line = in.readLine()) != null && !line.isEmpty()) {
        if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
          length = Integer.parseInt(line.substring(15).strip());
        }
      }
      char[] body = new char[length];
      int read = 0;
      while (read < length) {
        read += in.read(body, read, length - read);
      }
      answer = new String(body);
    }
    assertThat(status).startsWith("HTTP/1.1 413");
    JsonNode json = JSON.readTree(answer);
    if (path.equals("/v1/messages")) {
      assertThat(json.path("type").asText()).isEqualTo("error");
      assertThat(json.path("error").path("type").asText()).isEqualTo("request_too_large");
    } else {
      assertThat(json.path("error").path("code").asText()).isEqualTo("request_too_large");
    }
    assertThat(engine.bodies).isEmpty();
  }

  @org.junit.jupiter.api.Test
  void invalidUtf8_isRejectedWith400() throws Exception {
    byte[] body =
        "{\"model\":\"tiny\",\"prompt\":\"hi \u00ff\"}"
            .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
    HttpResponse<String> r =
        java.net.http.HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + ingress.port() + "/v1/completions"))
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

package io.kvrouter.ingress.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Requests Pekko HTTP cannot parse never reach a route; the ingress still answers them with an
 * OpenAI-style JSON error and the parser's status ({@link OpenAiParsingErrors}), not Pekko's plain
 * text, and nothing reaches the router.
 */
class ParsingErrorsTest {

  private static ValidatingIngress ingress;

  @BeforeAll
  static void start() throws Exception {
    ingress = new ValidatingIngress(64, "8k", List.of());
  }

  @AfterAll
  static void stop() throws Exception {
    ingress.close();
  }

  private static String send(String request) throws Exception {
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), ingress.port())) {
      socket.setSoTimeout(30_000);
      OutputStream out = socket.getOutputStream();
      out.write(request.getBytes(StandardCharsets.US_ASCII));
      out.flush();
      return RawHttp.readResponse(socket.getInputStream());
    }
  }

  private static JsonNode error(String response) throws Exception {
    assertThat(response).containsIgnoringCase("Content-Type: application/json");
    return new ObjectMapper().readTree(response.substring(response.indexOf("\r\n\r\n") + 4));
  }

  @Test
  void aHeaderOverTheLimit_gets431AsAnOpenAiError() throws Exception {
    String response =
        send(
            "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Session-ID: "
                + "a".repeat(20_000)
                + "\r\nContent-Length: 2\r\n\r\n{}");
    assertThat(response).startsWith("HTTP/1.1 431");
    JsonNode error = error(response).path("error");
    assertThat(error.path("type").asText()).isEqualTo("invalid_request_error");
    assertThat(error.path("code").asText()).isEqualTo("request_header_too_large");
    assertThat(error.path("message").asText()).contains("8192");
    assertThat(ingress.router.queries).isEmpty();
  }

  @Test
  void aMalformedRequestLine_gets400AsAnOpenAiError() throws Exception {
    String response = send("POST /v1/completions NOT-HTTP\r\nHost: 127.0.0.1\r\n\r\n");
    assertThat(response).startsWith("HTTP/1.1 ");
    int status = Integer.parseInt(response.substring(9, 12));
    assertThat(status).isBetween(400, 505);
    JsonNode error = error(response).path("error");
    assertThat(error.path("message").asText()).isNotEmpty();
    assertThat(error.path("code").asText()).isNotEmpty();
  }
}

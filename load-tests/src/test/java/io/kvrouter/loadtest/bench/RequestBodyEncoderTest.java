package io.kvrouter.loadtest.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.util.List;
import org.junit.jupiter.api.Test;

class RequestBodyEncoderTest {

  private static JsonNode encode(BenchPrompt p, BenchEndpoint e, boolean ignoreEos)
      throws Exception {
    return new ObjectMapper()
        .readTree(
            RequestBodyEncoder.encode(new BenchRequest(0, null, p, 12, ""), "m", e, ignoreEos));
  }

  @Test
  void completions_sendTextOrTokenIds_streamingWithUsage() throws Exception {
    JsonNode text = encode(BenchPrompt.text("hi there"), BenchEndpoint.COMPLETIONS, false);
    assertThat(text.path("model").asText()).isEqualTo("m");
    assertThat(text.path("prompt").asText()).isEqualTo("hi there");
    assertThat(text.path("max_tokens").asInt()).isEqualTo(12);
    assertThat(text.path("stream").asBoolean()).isTrue();
    assertThat(text.path("stream_options").path("include_usage").asBoolean()).isTrue();
    assertThat(text.has("ignore_eos")).isFalse();
    JsonNode ids = encode(BenchPrompt.tokens(new int[] {1, 2, 3}), BenchEndpoint.COMPLETIONS, true);
    assertThat(ids.path("prompt").toString()).isEqualTo("[1,2,3]");
    assertThat(ids.path("ignore_eos").asBoolean()).isTrue();
  }

  @Test
  void chat_sendsMessages_andRejectsTokenIds() throws Exception {
    JsonNode chat =
        encode(
            BenchPrompt.chat(
                List.of(
                    new BenchPrompt.ChatMessage("system", "be brief"),
                    new BenchPrompt.ChatMessage("user", "hi"))),
            BenchEndpoint.CHAT,
            false);
    assertThat(chat.path("messages").toString())
        .isEqualTo(
            "[{\"role\":\"system\",\"content\":\"be brief\"},{\"role\":\"user\",\"content\":\"hi\"}]");
    assertThat(
            encode(BenchPrompt.text("q"), BenchEndpoint.CHAT, false)
                .path("messages")
                .get(0)
                .path("role")
                .asText())
        .isEqualTo("user");
    assertThatThrownBy(() -> encode(BenchPrompt.tokens(new int[] {1}), BenchEndpoint.CHAT, false))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () ->
                encode(
                    BenchPrompt.chat(List.of(new BenchPrompt.ChatMessage("user", "x"))),
                    BenchEndpoint.COMPLETIONS,
                    false))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void endpointPaths_acceptServerRootOrV1Base() {
    assertThat(BenchEndpoint.COMPLETIONS.under(URI.create("http://h:1")))
        .hasToString("http://h:1/v1/completions");
    assertThat(BenchEndpoint.CHAT.under(URI.create("http://h:1/v1/")))
        .hasToString("http://h:1/v1/chat/completions");
  }
}

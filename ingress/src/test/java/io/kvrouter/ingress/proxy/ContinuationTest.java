package io.kvrouter.ingress.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.ingress.api.Endpoint;
import io.kvrouter.ingress.api.InferenceRequest;
import io.kvrouter.ingress.api.RequestValidator;
import org.junit.jupiter.api.Test;

class ContinuationTest {

  static final ObjectMapper JSON = new ObjectMapper();
  final RequestValidator validator = new RequestValidator();

  InferenceRequest chat(String extra) throws Exception {
    return validator.validate(
        Endpoint.CHAT,
        JSON.readTree(
            "{\"model\":\"m\",\"stream\":true,\"max_tokens\":10,"
                + extra
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"));
  }

  @Test
  void structuredOutputAndForcedToolCalls_areRefused_plainTextAndAutoToolsAreNot()
      throws Exception {
    assertThat(Continuation.refusal(chat(""))).isNull();
    assertThat(Continuation.refusal(chat("\"response_format\":{\"type\":\"text\"},"))).isNull();
    assertThat(Continuation.refusal(chat("\"response_format\":{\"type\":\"json_object\"},")))
        .isEqualTo(Continuation.Refusal.STRUCTURED);
    assertThat(Continuation.refusal(chat("\"guided_regex\":\"a+\",")))
        .isEqualTo(Continuation.Refusal.STRUCTURED);
    String tools =
        "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{}}}],";
    assertThat(Continuation.refusal(chat(tools))).isNull();
    assertThat(Continuation.refusal(chat(tools + "\"tool_choice\":\"required\",")))
        .isEqualTo(Continuation.Refusal.TOOL_CALL);
    assertThat(Continuation.refusal(chat("\"n\":2,"))).isEqualTo(Continuation.Refusal.UNSUPPORTED);
  }

  @Test
  void chat_continuesAnOpenAssistantMessage_withTheTokensLeft() throws Exception {
    ObjectNode body = Continuation.body(chat(""), new int[] {1, 2}, "Hel", new int[] {7}, true);

    assertThat(body.path("max_tokens").asInt()).isEqualTo(9);
    assertThat(body.path("continue_final_message").asBoolean()).isTrue();
    assertThat(body.path("add_generation_prompt").asBoolean(true)).isFalse();
    assertThat(body.path("messages").get(1).path("role").asText()).isEqualTo("assistant");
    assertThat(body.path("messages").get(1).path("content").asText()).isEqualTo("Hel");
  }

  @Test
  void chatTheClientAlreadyPrefilled_growsItsOwnAssistantMessage() throws Exception {
    InferenceRequest request =
        validator.validate(
            Endpoint.CHAT,
            JSON.readTree(
                "{\"model\":\"m\",\"stream\":true,\"continue_final_message\":true,"
                    + "\"add_generation_prompt\":false,\"messages\":[{\"role\":\"user\","
                    + "\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"Sure: \"}]}"));

    ObjectNode body = Continuation.body(request, new int[] {1}, "yes", new int[] {5}, true);

    assertThat(body.path("messages")).hasSize(2);
    assertThat(body.path("messages").get(1).path("content").asText()).isEqualTo("Sure: yes");
  }

  @Test
  void completions_sendIdsOrText_asTheEngineTakesThem_andNoEcho() throws Exception {
    InferenceRequest request =
        validator.validate(
            Endpoint.COMPLETIONS,
            JSON.readTree(
                "{\"model\":\"m\",\"stream\":true,\"echo\":true,\"max_tokens\":4,"
                    + "\"prompt\":\"Once\"}"));

    ObjectNode ids = Continuation.body(request, new int[] {1, 2}, " upon", new int[] {9}, true);
    ObjectNode text = Continuation.body(request, new int[] {1, 2}, " upon", new int[] {9}, false);

    assertThat(ids.path("prompt").toString()).isEqualTo("[1,2,9]");
    assertThat(ids.has("echo")).isFalse();
    assertThat(ids.path("max_tokens").asInt()).isEqualTo(3);
    assertThat(text.path("prompt").asText()).isEqualTo("Once upon");
  }

  @Test
  void anAnswerThatUsedUpItsMaxTokens_cannotContinue() throws Exception {
    assertThat(Continuation.body(chat(""), new int[] {1}, "x", new int[10], true)).isNull();
  }
}

package io.kvrouter.ingress.tokenize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ChatMlTemplateTest {

  private static final ChatTemplate CHATML = ChatMlTemplate.INSTANCE;

  @Test
  void conversation_rendersImStartImEndTurns_withGenerationPrompt() {
    String out =
        CHATML.render(
            List.of(
                Map.of("role", "system", "content", "Be brief."),
                Map.of("role", "user", "content", "Hi")),
            null,
            true,
            Map.of());

    assertThat(out)
        .isEqualTo(
            "<|im_start|>system\nBe brief.<|im_end|>\n"
                + "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  }

  @Test
  void withoutGenerationPrompt_endsAfterLastTurn() {
    assertThat(
            CHATML.render(List.of(Map.of("role", "user", "content", "Hi")), null, false, Map.of()))
        .isEqualTo("<|im_start|>user\nHi<|im_end|>\n");
  }

  @Test
  void contentParts_contributeTheirText_andNullContentIsEmpty() {
    Map<String, Object> assistant = new java.util.HashMap<>();
    assistant.put("role", "assistant");
    assistant.put("content", null);
    String out =
        CHATML.render(
            List.of(
                Map.of(
                    "role",
                    "user",
                    "content",
                    List.of(
                        Map.of("type", "text", "text", "look "),
                        Map.of("type", "image_url", "image_url", Map.of("url", "http://x")),
                        Map.of("type", "text", "text", "here"))),
                assistant),
            null,
            false,
            Map.of());

    assertThat(out)
        .isEqualTo(
            "<|im_start|>user\n"
                + io.kvrouter.protocol.keys.MediaPrompt.MARKER
                + "\nlook \nhere<|im_end|>\n"
                + "<|im_start|>assistant\n<|im_end|>\n");
  }

  @Test
  void tools_goIntoALeadingSystemTurn_andToolCallsAfterContent() {
    // Ordered like parsed JSON (Map.of has no stable order).
    Map<String, Object> tool = new java.util.LinkedHashMap<>();
    tool.put("type", "function");
    tool.put("function", Map.of("name", "f"));
    String out =
        CHATML.render(
            List.of(
                Map.of("role", "system", "content", "S"),
                Map.of(
                    "role",
                    "assistant",
                    "content",
                    "ok",
                    "tool_calls",
                    List.of(Map.of("function", Map.of("name", "f"))))),
            List.of(tool),
            false,
            Map.of());

    assertThat(out)
        .isEqualTo(
            "<|im_start|>system\nS\n\n<tools>\n"
                + "{\"type\": \"function\", \"function\": {\"name\": \"f\"}}\n</tools><|im_end|>\n"
                + "<|im_start|>assistant\nok\n<tool_call>\n{\"function\": {\"name\": \"f\"}}\n"
                + "</tool_call><|im_end|>\n");
  }

  @Test
  void emptyConversationOrMissingRole_isRejected() {
    assertThatThrownBy(() -> CHATML.render(List.of(), null, true, Map.of()))
        .isInstanceOf(ChatTemplateException.class);
    assertThatThrownBy(() -> CHATML.render(List.of(Map.of("content", "x")), null, true, Map.of()))
        .isInstanceOf(ChatTemplateException.class)
        .hasMessageContaining("no role");
  }
}

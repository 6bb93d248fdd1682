package io.kvrouter.ingress.tokenize;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.keys.MediaPrompt;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ChatContentTest {

  private static final List<Object> PARTS =
      List.of(
          Map.of("type", "text", "text", "first"),
          Map.of("type", "image_url", "image_url", Map.of("url", "data:...")),
          Map.of("type", "text", "text", "second"));

  /** The image part's placeholder goes in front, as vLLM's string content format puts it. */
  private static final String FLAT = MediaPrompt.MARKER + "\nfirst\nsecond";

  @Test
  void textParts_joinWithNewline_likeVllm_imagesInFront_andOtherPartsDrop() {
    assertThat(ChatContent.text(PARTS)).isEqualTo(FLAT);
    assertThat(
            ChatContent.text(
                List.of(Map.of("type", "text", "text", "a"), Map.of("type", "input_audio"))))
        .isEqualTo("a");
    assertThat(ChatContent.text("plain")).isEqualTo("plain");
    assertThat(ChatContent.text(null)).isEmpty();
  }

  @Test
  void flattenText_copiesOnlyMessagesWithParts_andLeavesInputAlone() {
    Map<String, Object> listMsg = Map.of("role", "user", "content", PARTS);
    Map<String, Object> strMsg = Map.of("role", "assistant", "content", "ok");
    List<Map<String, Object>> in = List.of(listMsg, strMsg);

    List<Map<String, Object>> out = ChatContent.flattenText(in);

    assertThat(out.get(0)).containsEntry("content", FLAT).containsEntry("role", "user");
    assertThat(out.get(1)).isSameAs(strMsg);
    assertThat(listMsg.get("content")).isSameAs(PARTS);
    assertThat(ChatContent.flattenText(List.of(strMsg))).containsExactly(strMsg);
  }

  @Test
  void templatesThatLoopOverParts_areRecognized() {
    assertThat(
            ChatContent.templateLoopsOverContent(
                "{% for c in message['content'] %}{{ c.text }}{% endfor %}"))
        .isTrue();
    assertThat(
            ChatContent.templateLoopsOverContent(
                "{%- for part in m.content if part.type == 'text' -%}"))
        .isTrue();
    assertThat(
            ChatContent.templateLoopsOverContent(
                "{{ message.content }}{% for m in messages %}{% endfor %}"))
        .isFalse();
  }

  @Test
  void qwen3Template_rendersPartsAsTheirJoinedText() {
    HfTokenizerConfig hf = HfTokenizerConfig.read(Qwen3Files.tokenizerConfig());
    JinjaChatTemplate qwen3 = new JinjaChatTemplate(hf.chatTemplate(), hf.specialTokens());

    String withParts =
        qwen3.render(List.of(Map.of("role", "user", "content", PARTS)), null, true, Map.of());
    String withString =
        qwen3.render(List.of(Map.of("role", "user", "content", FLAT)), null, true, Map.of());

    assertThat(withParts).isEqualTo(withString).contains(FLAT);
  }

  @Test
  void templateThatLoopsOverParts_seesTheList() {
    JinjaChatTemplate t =
        new JinjaChatTemplate(
            "{% for m in messages %}{% for p in m.content %}[{{ p.type }}]{% endfor %}{% endfor %}",
            Map.of());

    assertThat(t.render(List.of(Map.of("role", "user", "content", PARTS)), null, false, Map.of()))
        .isEqualTo("[text][image_url][text]");
  }
}

package io.kvrouter.ingress.tokenize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Python compatibility layer against Python jinja2 itself: {@code tokenize/jinja2-cases.json}
 * holds templates and conversations rendered by jinja2 3.1.6 configured as transformers does
 * ({@code tokenize/make-jinja2-cases.py}). Beyond the shared reference, it covers each idiom on its
 * own and Qwen3 conversations the reference lacks (reasoning_content, parallel and string tool-call
 * arguments, multi-step tool use).
 */
class JinjaCompatibilityTest {

  private static final JsonNode CASES = Qwen3Files.resource("jinja2-cases.json");
  private static final List<Map<String, Object>> ONE_MESSAGE =
      List.of(Map.of("role", "user", "content", "x"));

  static Stream<Arguments> idioms() {
    return StreamSupport.stream(CASES.get("idioms").spliterator(), false)
        .map(c -> Arguments.of(c.get("name").asText(), c));
  }

  static Stream<Arguments> conversations() {
    return StreamSupport.stream(CASES.get("qwen3_conversations").spliterator(), false)
        .map(c -> Arguments.of(c.get("name").asText(), c));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("idioms")
  void pythonIdiom_rendersAsJinja2Does(String name, JsonNode c) {
    JinjaChatTemplate template = new JinjaChatTemplate(c.get("template").asText(), Map.of());

    String out = template.render(ONE_MESSAGE, null, false, Qwen3Files.plain(CASES.get("context")));

    assertThat(out).isEqualTo(c.get("rendered").asText());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("conversations")
  void qwen3Conversation_rendersAsJinja2Does(String name, JsonNode c) {
    HfTokenizerConfig hf = HfTokenizerConfig.read(Qwen3Files.tokenizerConfig());
    JinjaChatTemplate template = new JinjaChatTemplate(hf.chatTemplate(), hf.specialTokens());

    String out =
        template.render(
            Qwen3Files.plain(c.get("messages")),
            c.has("tools") ? Qwen3Files.plain(c.get("tools")) : null,
            c.get("add_generation_prompt").asBoolean(),
            Qwen3Files.kwargs(c));

    assertThat(out).isEqualTo(c.get("rendered").asText());
  }

  @org.junit.jupiter.api.Test
  void qwen3Template_isParsedOnce_andItsTreeRendersEveryConversationFromManyThreadsAtOnce()
      throws Exception {
    HfTokenizerConfig hf = HfTokenizerConfig.read(Qwen3Files.tokenizerConfig());
    JinjaChatTemplate template = new JinjaChatTemplate(hf.chatTemplate(), hf.specialTokens());
    assertThat(template.parsedOnce()).isTrue();
    List<JsonNode> cases = conversations().map(a -> (JsonNode) a.get()[1]).toList();
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(4);
    try {
      List<java.util.concurrent.Future<Boolean>> results = new java.util.ArrayList<>();
      for (int i = 0; i < 200; i++) {
        JsonNode c = cases.get(i % cases.size());
        results.add(
            pool.submit(
                () ->
                    template
                        .render(
                            Qwen3Files.plain(c.get("messages")),
                            c.has("tools") ? Qwen3Files.plain(c.get("tools")) : null,
                            c.get("add_generation_prompt").asBoolean(),
                            Qwen3Files.kwargs(c))
                        .equals(c.get("rendered").asText())));
      }
      for (java.util.concurrent.Future<Boolean> r : results) {
        assertThat(r.get()).isTrue();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @org.junit.jupiter.api.Test
  void aTemplateWithASyntaxError_isNotCached_andStillReportsItsError() {
    JinjaChatTemplate template = new JinjaChatTemplate("{% if messages %}unclosed", Map.of());
    assertThat(template.parsedOnce()).isFalse();
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> template.render(ONE_MESSAGE, null, false, Map.of()))
        .isInstanceOf(ChatTemplateException.class);
  }

  @Test
  void raiseException_surfacesTheTemplatesMessage() {
    JinjaChatTemplate template =
        new JinjaChatTemplate(
            "{% if messages[0].role != 'system' %}{{ raise_exception('System first, please') }}"
                + "{% endif %}ok",
            Map.of());

    assertThatThrownBy(() -> template.render(ONE_MESSAGE, null, true, Map.of()))
        .isInstanceOf(ChatTemplateException.class)
        .hasMessage("System first, please");
  }

  @Test
  void strftimeNow_formatsTodayAsPythonDoes() {
    JinjaChatTemplate template = new JinjaChatTemplate("{{ strftime_now('%d %b %Y') }}", Map.of());

    assertThat(template.render(ONE_MESSAGE, null, false, Map.of()))
        .matches("\\d{2} [A-Z][a-z]{2} \\d{4}");
    assertThat(
            TemplateFunctions.strftime(
                java.time.LocalDateTime.of(2024, 7, 5, 14, 3, 9),
                "%d %b %Y|%B %A %a|%H:%M:%S %I%p|%y-%m %j|%% %Q"))
        .isEqualTo("05 Jul 2024|July Friday Fri|14:03:09 02PM|24-07 187|% %Q");
  }

  @Test
  void evaluationError_isReportedWithItsLine() {
    JinjaChatTemplate template =
        new JinjaChatTemplate("line one\n{{ messages[0].content.nosuchmethod(1) }}", Map.of());

    assertThatThrownBy(() -> template.render(ONE_MESSAGE, null, true, Map.of()))
        .isInstanceOf(ChatTemplateException.class)
        .hasMessageContaining("line 2");
  }

  @Test
  void specialTokens_areTemplateVariables_andKwargsOverrideThem() {
    JinjaChatTemplate template =
        new JinjaChatTemplate(
            "{{ bos_token }}|{{ eos_token }}", Map.of("bos_token", "<s>", "eos_token", "</s>"));

    assertThat(template.render(ONE_MESSAGE, null, false, Map.of())).isEqualTo("<s>|</s>");
    assertThat(template.render(ONE_MESSAGE, null, false, Map.of("eos_token", "E")))
        .isEqualTo("<s>|E");
  }

  @Test
  void nullKwargsAndNullTools_renderLikeEmptyOnes() {
    JinjaChatTemplate template = new JinjaChatTemplate("{{ messages[0].content }}", Map.of());

    assertThat(template.render(ONE_MESSAGE, null, true, null)).isEqualTo("x");
  }

  @Test
  void emptyTools_areAbsent_soIfToolsIsFalse() {
    JinjaChatTemplate template =
        new JinjaChatTemplate("{% if tools %}T{% else %}F{% endif %}", Map.of());

    assertThat(template.render(ONE_MESSAGE, List.of(), false, Map.of())).isEqualTo("F");
    assertThat(template.render(ONE_MESSAGE, List.of(Map.of("type", "function")), false, Map.of()))
        .isEqualTo("T");
  }
}

package io.kvrouter.ingress.tokenize;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The done-when of issue 5: every chat case and encode case of the reference fixture {@code
 * tokenize/qwen3/reference.json} (Python jinja2 + HF tokenizers; see the README beside it in {@code
 * ingress/src/test/resources/tokenize/qwen3/}) is reproduced exactly, text and token ids, through
 * the same {@link TokenizerRegistry} path production uses.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class Qwen3ReferenceTest {

  private TokenizerRegistry registry;
  private ModelTokenizer qwen3;

  @BeforeAll
  void load() {
    registry = Qwen3Files.registry();
    qwen3 = registry.get(Qwen3Files.MODEL);
  }

  @AfterAll
  void close() {
    registry.close();
  }

  Stream<Arguments> chatCases() {
    return cases("chat_cases");
  }

  Stream<Arguments> encodeCases() {
    return cases("encode_cases");
  }

  private static Stream<Arguments> cases(String field) {
    JsonNode list = Qwen3Files.reference().get(field);
    return StreamSupport.stream(list.spliterator(), false)
        .map(c -> Arguments.of(c.has("name") ? c.get("name").asText() : c.get("text").asText(), c));
  }

  @Test
  void referenceHasCasesToCheck() {
    assertThat(chatCases()).hasSizeGreaterThanOrEqualTo(7);
    assertThat(encodeCases()).hasSizeGreaterThanOrEqualTo(6);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("chatCases")
  void chatCase_rendersReferenceTextAndEncodesToReferenceIds(String name, JsonNode c) {
    List<Map<String, Object>> messages = Qwen3Files.plain(c.get("messages"));
    List<Map<String, Object>> tools = c.has("tools") ? Qwen3Files.plain(c.get("tools")) : null;

    String rendered =
        qwen3.renderChat(
            messages, tools, c.get("add_generation_prompt").asBoolean(), Qwen3Files.kwargs(c));
    int[] ids =
        qwen3.encodeChat(
            messages, tools, c.get("add_generation_prompt").asBoolean(), Qwen3Files.kwargs(c));

    assertThat(rendered).isEqualTo(c.get("rendered").asText());
    assertThat(ids).containsExactly(Qwen3Files.ids(c.get("token_ids")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("encodeCases")
  void encodeCase_withSpecialTokens_matchesReferenceIds(String text, JsonNode c) {
    assertThat(qwen3.encodePrompt(text)).containsExactly(Qwen3Files.ids(c.get("token_ids")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("encodeCases")
  void encodeCase_decodesBackToItsText(String text, JsonNode c) {
    assertThat(qwen3.tokenizer().decode(Qwen3Files.ids(c.get("token_ids")))).isEqualTo(text);
  }
}

package io.kvrouter.ingress.tokenize;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvrouter.ingress.api.TemplateInputs;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Tool-using conversations, as OpenAI clients send them (tool-call arguments as JSON text, tools
 * without descriptions, parallel calls, consecutive tool results, reasoning, malformed arguments,
 * non-ASCII), go through the router's {@link TemplateInputs} and Qwen3's chat template in jinjava
 * and must give, byte for byte, what vLLM's normalization and Python's jinja2 give ({@code
 * tokenize/qwen3/tool_cases.json}, produced by {@code render_tool_cases.py} beside it).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class Qwen3ToolTemplateTest {

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

  Stream<Arguments> cases() throws IOException {
    try (InputStream in = getClass().getResourceAsStream("/tokenize/qwen3/tool_cases.json")) {
      JsonNode cases = Qwen3Files.JSON.readTree(in).get("cases");
      assertThat(cases).hasSizeGreaterThanOrEqualTo(4);
      return StreamSupport.stream(cases.spliterator(), false)
          .map(c -> Arguments.of(c.get("name").asText(), c));
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void toolConversation_rendersAsVllmAndPythonJinjaRenderIt(String name, JsonNode c) {
    List<Map<String, Object>> messages =
        TemplateInputs.messages(Qwen3Files.plain(c.get("messages")));
    List<Map<String, Object>> tools = TemplateInputs.tools(Qwen3Files.plain(c.get("tools")));

    String rendered =
        qwen3.renderChat(
            messages, tools, c.get("add_generation_prompt").asBoolean(), Qwen3Files.kwargs(c));

    assertThat(rendered).isEqualTo(c.get("rendered").asText());
  }
}

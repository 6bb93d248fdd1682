package io.kvrouter.ingress.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class AnthropicTranslatorTest {

  static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void wholeCompletionWithToolCalls_becomesToolUseBlocks_withAnthropicUsage() throws Exception {
    JsonNode chat =
        JSON.readTree(
            """
            {"id":"chatcmpl-9","choices":[{"index":0,"finish_reason":"tool_calls",
              "message":{"role":"assistant","content":null,"tool_calls":[
                {"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\\"city\\": \\"Paris\\"}"}},
                {"id":"call_b","type":"function","function":{"name":"get_time","arguments":"not json"}}]}}],
             "usage":{"prompt_tokens":100,"completion_tokens":12,"prompt_tokens_details":{"cached_tokens":64}}}
            """);
    JsonNode m = new AnthropicTranslator("m", 99).message(chat);
    assertThat(m.path("id").asText()).isEqualTo("msg_9");
    assertThat(m.path("stop_reason").asText()).isEqualTo("tool_use");
    assertThat(m.path("content"))
        .isEqualTo(
            JSON.readTree(
                """
                [{"type":"tool_use","id":"call_a","name":"get_weather","input":{"city":"Paris"}},
                 {"type":"tool_use","id":"call_b","name":"get_time","input":{}}]
                """));
    assertThat(m.path("usage"))
        .isEqualTo(
            JSON.readTree(
                """
                {"input_tokens":36,"cache_creation_input_tokens":0,"cache_read_input_tokens":64,"output_tokens":12}
                """));
  }

  @Test
  void stopString_isReportedAsTheStopSequenceTheClientAskedFor() throws Exception {
    JsonNode chat =
        JSON.readTree(
            """
            {"choices":[{"finish_reason":"stop","stop_reason":"END","message":{"content":"done"}}],
             "usage":{"prompt_tokens":5,"completion_tokens":1}}
            """);
    JsonNode m = new AnthropicTranslator("m", 5, List.of("END")).message(chat);
    assertThat(m.path("stop_reason").asText()).isEqualTo("stop_sequence");
    assertThat(m.path("stop_sequence").asText()).isEqualTo("END");
  }

  @Test
  void streamedTextThenToolCall_becomesTwoBlocksWithInputJsonDeltas() throws Exception {
    AnthropicTranslator t = new AnthropicTranslator("m", 50);
    List<String> events = new ArrayList<>();
    for (String chunk :
        List.of(
            "{\"id\":\"chatcmpl-1\",\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}",
            "{\"choices\":[{\"delta\":{\"content\":\"Checking.\"}}]}",
            "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}}]}}]}",
            "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"city\\\":\"}}]}}]}",
            "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"Paris\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}",
            "{\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":9,\"prompt_tokens_details\":{\"cached_tokens\":32}}}")) {
      events.addAll(t.onChunk(JSON.readTree(chunk)));
    }
    events.addAll(t.onEnd());

    List<String> names = events.stream().map(e -> e.substring(7, e.indexOf('\n'))).toList();
    assertThat(names)
        .containsExactly(
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop");
    JsonNode toolStart = data(events.get(5));
    assertThat(toolStart.path("index").asInt()).isEqualTo(1);
    assertThat(toolStart.path("content_block"))
        .isEqualTo(
            JSON.readTree(
                "{\"type\":\"tool_use\",\"id\":\"call_1\",\"name\":\"get_weather\",\"input\":{}}"));
    String json =
        data(events.get(6)).path("delta").path("partial_json").asText()
            + data(events.get(7)).path("delta").path("partial_json").asText();
    assertThat(JSON.readTree(json)).isEqualTo(JSON.readTree("{\"city\":\"Paris\"}"));
    JsonNode delta = data(events.get(9));
    assertThat(delta.path("delta").path("stop_reason").asText()).isEqualTo("tool_use");
    assertThat(delta.path("usage").path("input_tokens").asInt()).isEqualTo(18);
    assertThat(delta.path("usage").path("cache_read_input_tokens").asInt()).isEqualTo(32);
    assertThat(delta.path("usage").path("output_tokens").asInt()).isEqualTo(9);
  }

  private static JsonNode data(String event) throws Exception {
    return JSON.readTree(Sse.data(event));
  }
}

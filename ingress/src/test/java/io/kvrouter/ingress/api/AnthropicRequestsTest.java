package io.kvrouter.ingress.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class AnthropicRequestsTest {

  static final ObjectMapper JSON = new ObjectMapper();
  final RequestValidator validator = new RequestValidator();

  InferenceRequest messages(String json) throws Exception {
    return validator.validate(Endpoint.MESSAGES, JSON.readTree(json));
  }

  ApiError refusal(String json) {
    return ((ApiException) org.assertj.core.api.Assertions.catchThrowable(() -> messages(json)))
        .error();
  }

  @Test
  void agentTurn_withToolsToolUseAndToolResult_becomesChatWithToolCallsAndToolMessages()
      throws Exception {
    InferenceRequest r =
        messages(
            """
            {"model":"m","max_tokens":64,"stream":true,
             "system":[{"type":"text","text":"x-anthropic-billing-header: cc=1;"},
                       {"type":"text","text":"You are an agent.","cache_control":{"type":"ephemeral"}},
                       {"type":"text","text":" Be brief."}],
             "metadata":{"user_id":"session-7"},
             "tools":[{"name":"get_weather","description":"Weather","input_schema":{"properties":{"city":{"type":"string"}}}}],
             "tool_choice":{"type":"any","disable_parallel_tool_use":true},
             "stop_sequences":["END"],"temperature":0.2,"top_k":5,
             "messages":[
               {"role":"user","content":"Weather in Paris?"},
               {"role":"assistant","content":[
                  {"type":"thinking","thinking":"Call the tool.","signature":"s"},
                  {"type":"text","text":""},
                  {"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}]},
               {"role":"user","content":[
                  {"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"18C"},{"type":"text","text":"sunny"}]},
                  {"type":"text","text":"And tomorrow?"},
                  {"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}]}
            """);

    ObjectNode chat = r.engineBody();
    assertThat(chat.get("messages"))
        .isEqualTo(
            JSON.readTree(
                """
                [{"role":"system","content":"You are an agent. Be brief."},
                 {"role":"user","content":"Weather in Paris?"},
                 {"role":"assistant","reasoning":"Call the tool.","tool_calls":[
                   {"id":"toolu_1","type":"function","function":{"name":"get_weather","arguments":"{\\"city\\":\\"Paris\\"}"}}]},
                 {"role":"tool","tool_call_id":"toolu_1","content":"18C\\nsunny"},
                 {"role":"user","content":[{"type":"text","text":"And tomorrow?"},
                   {"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}]
                """));
    assertThat(chat.get("tools"))
        .isEqualTo(
            JSON.readTree(
                """
                [{"type":"function","function":{"name":"get_weather","description":"Weather",
                  "parameters":{"properties":{"city":{"type":"string"}},"type":"object"}}}]
                """));
    assertThat(chat.get("tool_choice").asText()).isEqualTo("required");
    assertThat(chat.get("parallel_tool_calls").asBoolean()).isFalse();
    assertThat(chat.get("stop")).isEqualTo(JSON.readTree("[\"END\"]"));
    assertThat(chat.get("top_k").asInt()).isEqualTo(5);
    assertThat(chat.path("stream_options").path("include_usage").asBoolean()).isTrue();
    assertThat(r.sessionKey()).isEqualTo("session-7");
    assertThat(r.nativeBody().path("system").size()).as("kept for pass-through").isEqualTo(3);
    // as the template sees it: arguments parsed, reasoning copied, description kept
    Map<String, Object> assistant = r.messages().get(2);
    assertThat(assistant.get("reasoning_content")).isEqualTo("Call the tool.");
    assertThat(assistant.get("content")).isEqualTo("");
    assertThat(assistant.get("tool_calls").toString()).contains("arguments={city=Paris}");
  }

  @Test
  void toolsWithoutAChoice_getAuto_asVllmDoes() throws Exception {
    InferenceRequest r =
        messages(
            """
            {"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}],
             "tools":[{"name":"t","input_schema":{"type":"object"}}]}
            """);
    assertThat(r.engineBody().get("tool_choice").asText()).isEqualTo("auto");
    assertThat(r.tools().get(0).toString()).contains("description=null");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "document block|{\"model\":\"m\",\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"document\",\"source\":{}}]}]}|messages.0.content.0.type",
        "server tool|{\"model\":\"m\",\"max_tokens\":8,\"tools\":[{\"type\":\"web_search_20250305\",\"name\":\"web_search\"}],\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}|tools.0.type",
        "mcp servers|{\"model\":\"m\",\"max_tokens\":8,\"mcp_servers\":[{}],\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}|mcp_servers",
        "file image|{\"model\":\"m\",\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"source\":{\"type\":\"file\",\"file_id\":\"f\"}}]}]}|messages.0.content.0.source.type",
        "tool_use from the user|{\"model\":\"m\",\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"tool_use\",\"id\":\"a\",\"name\":\"b\",\"input\":{}}]}]}|messages.0.content.0.type",
        "tool_result without id|{\"model\":\"m\",\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"content\":\"x\"}]}]}|messages.0.content.0.tool_use_id",
        "bad role|{\"model\":\"m\",\"max_tokens\":8,\"messages\":[{\"role\":\"system\",\"content\":\"x\"}]}|messages.0.role",
        "named choice without name|{\"model\":\"m\",\"max_tokens\":8,\"tool_choice\":{\"type\":\"tool\"},\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}|tool_choice.name",
        "stop sequence not a string|{\"model\":\"m\",\"max_tokens\":8,\"stop_sequences\":[1],\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}|stop_sequences.0",
        "user id not a string|{\"model\":\"m\",\"max_tokens\":8,\"metadata\":{\"user_id\":3},\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}|metadata.user_id",
        "missing max_tokens|{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}|max_tokens"
      })
  void refusal_namesTheFieldInAnthropicShape(String what, String body, String field) {
    ApiError e = refusal(body);
    assertThat(e.status()).isEqualTo(400);
    assertThat(e.param()).isEqualTo(field);
    assertThat(e.message()).contains(field);
    JsonNode shape = e.toAnthropic();
    assertThat(shape.path("type").asText()).isEqualTo("error");
    assertThat(shape.path("error").path("type").asText()).isEqualTo("invalid_request_error");
  }

  @Test
  void countTokens_needsNoMaxTokens_andRendersTheSameConversation() throws Exception {
    String conversation =
        "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
            + "\"tools\":[{\"name\":\"t\",\"input_schema\":{\"type\":\"object\"}}]";
    InferenceRequest count =
        validator.validate(
            Endpoint.COUNT_TOKENS, JSON.readTree("{\"model\":\"m\"," + conversation + "}"));
    InferenceRequest message = messages("{\"model\":\"m\",\"max_tokens\":4," + conversation + "}");
    assertThat(count.messages()).isEqualTo(message.messages());
    assertThat(count.tools()).isEqualTo(message.tools());
    assertThatThrownBy(
            () ->
                validator.validate(
                    Endpoint.COUNT_TOKENS, JSON.readTree("{\"model\":\"m\",\"messages\":[]}")))
        .isInstanceOf(ApiException.class)
        .hasMessageContaining("messages");
  }
}

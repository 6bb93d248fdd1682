package io.kvrouter.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * What vLLM does to a chat request before it renders the chat template, so the simulated engine
 * renders the prompt a real one would (and the router's prediction is held to that):
 *
 * <ul>
 *   <li>Tool definitions are validated into {@code ChatCompletionToolsParam} and handed to the
 *       template as {@code tool.model_dump()}: {@code type} first, then {@code function} with
 *       {@code name}, {@code description} and {@code parameters} ({@code null} when absent), then
 *       any extra keys the client sent (the models allow extras) (vllm-project/vllm {@code
 *       vllm/entrypoints/openai/engine/protocol.py} {@code FunctionDefinition}, {@code
 *       chat_completion/serving.py}).
 *   <li>Assistant tool calls' {@code function.arguments}, a JSON string in OpenAI's format, are
 *       parsed into an object, as templates expect; unparsable or non-object arguments become
 *       {@code {}}, and an empty {@code tool_calls} list is dropped ({@code
 *       vllm/entrypoints/chat_utils.py} {@code _postprocess_messages}).
 * </ul>
 *
 * <p>Stateless; the input is never modified.
 */
final class VllmChat {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Set<String> FUNCTION_FIELDS = Set.of("name", "description", "parameters");

  private VllmChat() {}

  /** A copy of a chat body with its tools and tool calls as vLLM hands them to the template. */
  static ObjectNode normalize(JsonNode body) {
    return normalize(body, true);
  }

  /**
   * The same, leaving the tools as they are when {@code dumpTools} is false (the Responses API
   * builds its tool dicts itself and hands them to the template unvalidated).
   */
  static ObjectNode normalize(JsonNode body, boolean dumpTools) {
    ObjectNode out = body.deepCopy();
    JsonNode tools = out.get("tools");
    if (dumpTools && tools != null && tools.isArray()) {
      ArrayNode dumped = out.putArray("tools");
      for (JsonNode t : tools) {
        dumped.add(dumpTool(t));
      }
    }
    JsonNode messages = out.get("messages");
    if (messages != null && messages.isArray()) {
      for (JsonNode m : messages) {
        if (m.isObject() && "assistant".equals(m.path("role").asText())) {
          parseArguments((ObjectNode) m);
        }
      }
    }
    return out;
  }

  private static JsonNode dumpTool(JsonNode tool) {
    if (!tool.isObject()) {
      return tool;
    }
    JsonNodeFactory f = JsonNodeFactory.instance;
    ObjectNode out = f.objectNode();
    out.put("type", "function");
    JsonNode function = tool.path("function");
    ObjectNode fn = out.putObject("function");
    fn.set("name", function.path("name").isMissingNode() ? f.nullNode() : function.get("name"));
    fn.set("description", orNull(function.get("description")));
    fn.set("parameters", orNull(function.get("parameters")));
    Iterator<Map.Entry<String, JsonNode>> extra = function.fields();
    while (extra.hasNext()) {
      Map.Entry<String, JsonNode> e = extra.next();
      if (!FUNCTION_FIELDS.contains(e.getKey())) {
        fn.set(e.getKey(), e.getValue());
      }
    }
    Iterator<Map.Entry<String, JsonNode>> top = tool.fields();
    while (top.hasNext()) {
      Map.Entry<String, JsonNode> e = top.next();
      if (!e.getKey().equals("type") && !e.getKey().equals("function")) {
        out.set(e.getKey(), e.getValue());
      }
    }
    return out;
  }

  private static JsonNode orNull(JsonNode v) {
    return v == null ? JsonNodeFactory.instance.nullNode() : v;
  }

  private static void parseArguments(ObjectNode message) {
    JsonNode calls = message.get("tool_calls");
    if (calls == null || !calls.isArray()) {
      return;
    }
    if (calls.isEmpty()) {
      message.remove("tool_calls");
      return;
    }
    for (JsonNode call : calls) {
      JsonNode function = call.path("function");
      if (!function.isObject()) {
        continue;
      }
      JsonNode args = function.get("arguments");
      JsonNode parsed = args;
      if (args != null && args.isTextual() && !args.asText().isEmpty()) {
        try {
          parsed = JSON.readTree(args.asText());
        } catch (Exception malformed) {
          parsed = null;
        }
      }
      ((ObjectNode) function)
          .set(
              "arguments",
              parsed != null && parsed.isObject() ? parsed : JsonNodeFactory.instance.objectNode());
    }
  }
}

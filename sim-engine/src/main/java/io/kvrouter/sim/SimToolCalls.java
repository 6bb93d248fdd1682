package io.kvrouter.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;

/**
 * When the simulated engine answers a chat turn with a tool call instead of text, and what the call
 * says. Deterministic, so tests can drive tool-using conversations: a turn calls a tool when the
 * request offers tools, {@code tool_choice} is not {@code "none"}, and either {@code tool_choice}
 * demands a call ({@code "required"} or a named function) or the last message is the user's and
 * names one of the tools (the first named one is called). A turn that ends with a tool result is
 * answered with text, as a model does once it has what it asked for.
 *
 * <p>The call's arguments follow the tool's JSON schema: every required property (every property
 * when none is marked required) with a fixed value of its type ({@code "sim"} for strings, 1 for
 * numbers, {@code true} for booleans, empty arrays and objects).
 *
 * <p>A real model writes a call as text that vLLM's tool parser (hermes for Qwen3) turns into
 * {@code tool_calls}; its streamed form is one delta naming the function, then deltas of the
 * arguments' JSON. The simulated call is spent the same way: one token for the header, then one per
 * {@link #FRAGMENT}-character piece of the arguments.
 */
final class SimToolCalls {

  /** Characters of arguments JSON per generated token. */
  static final int FRAGMENT = 8;

  private SimToolCalls() {}

  /**
   * A tool call the engine makes.
   *
   * @param id the call id ({@code chatcmpl-tool-...} as vLLM makes them, {@code toolu_...} as
   *     Anthropic does)
   * @param name the function called
   * @param arguments the arguments as JSON text
   */
  record Call(String id, String name, String arguments) {

    /** Tokens the whole call takes: the header, then the argument fragments. */
    int tokens() {
      return 1 + (arguments.length() + FRAGMENT - 1) / FRAGMENT;
    }

    /** The arguments text spent with token {@code index} (0 is the header: empty). */
    String fragment(int index) {
      if (index == 0) {
        return "";
      }
      int from = (index - 1) * FRAGMENT;
      return from >= arguments.length()
          ? ""
          : arguments.substring(from, Math.min(arguments.length(), from + FRAGMENT));
    }
  }

  /**
   * The call a chat request (normalized as vLLM does) makes, or {@code null} for a text answer.
   *
   * @param callId the id the call carries ({@link SimIds})
   */
  static Call plan(JsonNode chatBody, String callId) {
    JsonNode tools = chatBody.path("tools");
    if (!tools.isArray() || tools.isEmpty()) {
      return null;
    }
    JsonNode choice = chatBody.path("tool_choice");
    if ("none".equals(choice.asText())) {
      return null;
    }
    JsonNode tool = null;
    if (choice.isObject()) {
      tool = byName(tools, choice.path("function").path("name").asText());
    } else {
      JsonNode messages = chatBody.path("messages");
      JsonNode last = messages.path(messages.size() - 1);
      if ("user".equals(last.path("role").asText())) {
        tool = mentioned(tools, text(last.path("content")));
      }
      if (tool == null && "required".equals(choice.asText())) {
        tool = tools.get(0);
      }
    }
    if (tool == null) {
      return null;
    }
    JsonNode function = tool.path("function");
    return new Call(
        callId, function.path("name").asText(), arguments(function.path("parameters")).toString());
  }

  private static JsonNode byName(JsonNode tools, String name) {
    for (JsonNode t : tools) {
      if (t.path("function").path("name").asText().equals(name)) {
        return t;
      }
    }
    return null;
  }

  private static JsonNode mentioned(JsonNode tools, String text) {
    String lower = text.toLowerCase(Locale.ROOT);
    JsonNode best = null;
    int bestAt = Integer.MAX_VALUE;
    for (JsonNode t : tools) {
      String name = t.path("function").path("name").asText();
      int at = name.isEmpty() ? -1 : lower.indexOf(name.toLowerCase(Locale.ROOT));
      if (at >= 0 && at < bestAt) {
        best = t;
        bestAt = at;
      }
    }
    return best;
  }

  private static String text(JsonNode content) {
    if (content.isTextual()) {
      return content.asText();
    }
    StringBuilder sb = new StringBuilder();
    for (JsonNode part : content) {
      sb.append(part.path("text").asText()).append('\n');
    }
    return sb.toString();
  }

  private static ObjectNode arguments(JsonNode schema) {
    ObjectNode args = JsonNodeFactory.instance.objectNode();
    JsonNode properties = schema.path("properties");
    JsonNode required = schema.path("required");
    Iterator<Map.Entry<String, JsonNode>> fields = properties.fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> p = fields.next();
      boolean wanted = !required.isArray() || required.isEmpty() || contains(required, p.getKey());
      if (wanted) {
        args.set(p.getKey(), sample(p.getValue().path("type").asText("string")));
      }
    }
    return args;
  }

  private static boolean contains(JsonNode array, String value) {
    for (JsonNode v : array) {
      if (v.asText().equals(value)) {
        return true;
      }
    }
    return false;
  }

  private static JsonNode sample(String type) {
    JsonNodeFactory f = JsonNodeFactory.instance;
    return switch (type) {
      case "integer", "number" -> f.numberNode(1);
      case "boolean" -> f.booleanNode(true);
      case "array" -> f.arrayNode();
      case "object" -> f.objectNode();
      default -> f.textNode("sim");
    };
  }
}

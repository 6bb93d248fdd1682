package io.kvrouter.ingress.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Set;

/**
 * The content blocks and tools of an Anthropic request, each checked and translated to its OpenAI
 * chat form as vLLM translates it (see {@link AnthropicRequests}); refusals name the block's path.
 */
final class AnthropicBlocks {

  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  private static final Set<String> BLOCK_TYPES =
      Set.of("text", "image", "tool_use", "tool_result", "thinking", "redacted_thinking");

  private AnthropicBlocks() {}

  static String type(JsonNode block, String at) {
    if (!block.isObject()) {
      throw AnthropicRequests.fail(at, "Input should be a valid dictionary");
    }
    String type = block.path("type").asText("");
    if (type.isEmpty()) {
      throw AnthropicRequests.fail(at + ".type", "Field required");
    }
    if (!BLOCK_TYPES.contains(type)) {
      throw AnthropicRequests.fail(
          at + ".type",
          "'"
              + type
              + "' blocks are not supported: self-hosted engines take text, image, tool_use,"
              + " tool_result and thinking blocks");
    }
    return type;
  }

  static ObjectNode image(JsonNode source, String at) {
    String url;
    switch (source.path("type").asText("")) {
      case "base64" -> {
        if (!source.path("data").isTextual()) {
          throw AnthropicRequests.fail(at + ".data", "Field required");
        }
        url =
            "data:"
                + source.path("media_type").asText("image/jpeg")
                + ";base64,"
                + source.get("data").asText();
      }
      case "url" -> {
        if (!source.path("url").isTextual()) {
          throw AnthropicRequests.fail(at + ".url", "Field required");
        }
        url = source.get("url").asText();
      }
      default ->
          throw AnthropicRequests.fail(
              at + ".type",
              "image sources must be 'base64' or 'url' (files live on Anthropic's servers)");
    }
    ObjectNode part = F.objectNode().put("type", "image_url");
    part.putObject("image_url").put("url", url);
    return part;
  }

  static ObjectNode toolUse(JsonNode block, String at, String role) {
    if (!role.equals("assistant")) {
      throw AnthropicRequests.fail(at + ".type", "tool_use blocks belong to assistant messages");
    }
    for (String f : List.of("id", "name")) {
      if (!block.path(f).isTextual()) {
        throw AnthropicRequests.fail(at + "." + f, "Field required");
      }
    }
    JsonNode input = block.get("input");
    if (input != null && !input.isNull() && !input.isObject()) {
      throw AnthropicRequests.fail(at + ".input", "Input should be a valid dictionary");
    }
    ObjectNode call = F.objectNode();
    call.put("id", block.get("id").asText());
    call.put("type", "function");
    call.putObject("function")
        .put("name", block.get("name").asText())
        .put("arguments", input == null || input.isNull() ? "{}" : input.toString());
    return call;
  }

  static void toolResult(JsonNode block, String at, String role, ArrayNode out, ArrayNode parts) {
    if (!block.path("tool_use_id").isTextual()) {
      throw AnthropicRequests.fail(at + ".tool_use_id", "Field required");
    }
    JsonNode content = block.get("content");
    StringBuilder text = new StringBuilder();
    ArrayNode images = F.arrayNode();
    if (content != null && content.isTextual()) {
      text.append(content.asText());
    } else if (content != null && content.isArray()) {
      for (int i = 0; i < content.size(); i++) {
        JsonNode item = content.get(i);
        String itemAt = at + ".content." + i;
        switch (item.path("type").asText("")) {
          case "text" -> {
            if (!text.isEmpty()) {
              text.append('\n');
            }
            text.append(item.path("text").asText(""));
          }
          case "image" -> images.add(image(item.path("source"), itemAt + ".source"));
          default ->
              throw AnthropicRequests.fail(
                  itemAt + ".type", "tool results may hold text and image blocks only");
        }
      }
    } else if (content != null && !content.isNull()) {
      throw AnthropicRequests.fail(
          at + ".content", "Input should be a valid string or a list of blocks");
    }
    if (!role.equals("user")) {
      parts.addObject().put("type", "text").put("text", "Tool result: " + text);
      return;
    }
    out.addObject()
        .put("role", "tool")
        .put("tool_call_id", block.get("tool_use_id").asText())
        .put("content", text.toString());
    if (!images.isEmpty()) {
      out.addObject().put("role", "user").set("content", images);
    }
  }

  static ArrayNode tools(JsonNode tools) {
    if (!tools.isArray()) {
      throw AnthropicRequests.fail("tools", "Input should be a valid list");
    }
    ArrayNode out = F.arrayNode();
    for (int i = 0; i < tools.size(); i++) {
      JsonNode t = tools.get(i);
      String at = "tools." + i;
      if (!t.isObject()) {
        throw AnthropicRequests.fail(at, "Input should be a valid dictionary");
      }
      if (!t.has("input_schema")) {
        String type = t.path("type").asText("");
        throw AnthropicRequests.fail(
            at + (type.isEmpty() || "custom".equals(type) ? ".input_schema" : ".type"),
            type.isEmpty() || "custom".equals(type)
                ? "Field required"
                : "'"
                    + type
                    + "' is a tool Anthropic's servers define or run; only custom tools (name and"
                    + " input_schema) reach a self-hosted engine");
      }
      if (!t.path("name").isTextual()) {
        throw AnthropicRequests.fail(at + ".name", "Field required");
      }
      if (!t.get("input_schema").isObject()) {
        throw AnthropicRequests.fail(at + ".input_schema", "Input should be a valid dictionary");
      }
      ObjectNode fn = out.addObject().put("type", "function").putObject("function");
      fn.set("name", t.get("name"));
      if (t.hasNonNull("description")) {
        fn.set("description", t.get("description"));
      }
      ObjectNode schema = t.get("input_schema").deepCopy();
      if (!schema.has("type")) {
        schema.put("type", "object"); // as vLLM's AnthropicTool validator does
      }
      fn.set("parameters", schema);
    }
    return out;
  }

  static void toolChoice(JsonNode choice, ObjectNode chat) {
    if (!choice.isObject()) {
      throw AnthropicRequests.fail("tool_choice", "Input should be a valid dictionary");
    }
    switch (choice.path("type").asText("")) {
      case "auto" -> chat.put("tool_choice", "auto");
      case "any" -> chat.put("tool_choice", "required");
      case "none" -> chat.put("tool_choice", "none");
      case "tool" -> {
        if (!choice.path("name").isTextual()) {
          throw AnthropicRequests.fail("tool_choice.name", "Field required when type is 'tool'");
        }
        chat.putObject("tool_choice")
            .put("type", "function")
            .putObject("function")
            .put("name", choice.get("name").asText());
      }
      default ->
          throw AnthropicRequests.fail(
              "tool_choice.type", "Input should be 'auto', 'any', 'tool' or 'none'");
    }
    if (choice.path("disable_parallel_tool_use").asBoolean(false)) {
      chat.put("parallel_tool_calls", false);
    }
  }
}

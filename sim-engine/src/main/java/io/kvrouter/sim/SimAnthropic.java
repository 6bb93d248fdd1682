package io.kvrouter.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The simulated engine's Anthropic Messages API, served the way vLLM serves it (vllm-project/vllm
 * {@code vllm/entrypoints/anthropic/serving.py}, {@code AnthropicServingMessages}): the request is
 * converted to a chat completion request and generated as one, and the result converted back.
 *
 * <p>Request conversion: {@code system} (a string, or text blocks joined without separator, Claude
 * Code's {@code x-anthropic-billing-header} block skipped) becomes the first message; text blocks
 * become content parts (one text part becomes a plain string), images {@code image_url} parts,
 * {@code thinking} the assistant's {@code reasoning}, {@code tool_use} blocks the assistant's
 * {@code tool_calls} (arguments {@code json.dumps(input)}), a user's {@code tool_result} a {@code
 * tool} message placed before the rest of that user turn; tools become functions ({@code
 * input_schema} as {@code parameters}) with {@code tool_choice} {@code auto} when unset, and {@code
 * any} becomes {@code required}.
 *
 * <p>Response conversion: finish reasons map {@code stop}→{@code end_turn}, {@code length}→{@code
 * max_tokens}, {@code tool_calls}→{@code tool_use}; tool calls become {@code tool_use} blocks
 * (streamed as {@code content_block_start} then {@code input_json_delta}s). Usage follows vLLM's
 * fix for cache reporting (PR #40912): {@code input_tokens} are the prompt tokens not read from the
 * cache, {@code cache_read_input_tokens} the cached ones, {@code cache_creation_input_tokens} 0.
 * Like vLLM, no {@code ping} events.
 */
final class SimAnthropic {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  private SimAnthropic() {}

  /** The chat completion request vLLM makes of an Anthropic one. */
  static ObjectNode toChat(JsonNode body) {
    ObjectNode chat = F.objectNode();
    if (!body.path("model").isMissingNode()) {
      chat.set("model", body.get("model"));
    }
    ArrayNode messages = chat.putArray("messages");
    StringBuilder system = new StringBuilder();
    JsonNode s = body.path("system");
    if (s.isTextual()) {
      system.append(s.asText());
    } else if (s.isArray()) {
      for (JsonNode b : s) {
        String text = b.path("text").asText("");
        if ("text".equals(b.path("type").asText())
            && !text.isEmpty()
            && !text.startsWith("x-anthropic-billing-header")) {
          system.append(text);
        }
      }
    }
    if (system.length() > 0) {
      messages.addObject().put("role", "system").put("content", system.toString());
    }
    JsonNode in = body.path("messages");
    if (!in.isArray() || in.isEmpty()) {
      throw SimApiError.badRequest("messages: Field required", "messages");
    }
    for (JsonNode m : in) {
      convert(m, messages);
    }
    if (body.has("max_tokens")) {
      chat.set("max_tokens", body.get("max_tokens"));
    }
    for (String f : new String[] {"temperature", "top_p", "top_k", "stream"}) {
      if (body.has(f)) {
        chat.set(f, body.get(f));
      }
    }
    if (body.has("stop_sequences")) {
      chat.set("stop", body.get("stop_sequences"));
    }
    if (body.path("stream").asBoolean(false)) {
      chat.putObject("stream_options").put("include_usage", true);
    }
    JsonNode choice = body.path("tool_choice");
    if (choice.isObject()) {
      switch (choice.path("type").asText()) {
        case "any" -> chat.put("tool_choice", "required");
        case "none" -> chat.put("tool_choice", "none");
        case "tool" ->
            chat.putObject("tool_choice")
                .put("type", "function")
                .putObject("function")
                .put("name", choice.path("name").asText());
        default -> chat.put("tool_choice", "auto");
      }
    }
    JsonNode tools = body.path("tools");
    if (tools.isArray()) {
      ArrayNode out = chat.putArray("tools");
      for (JsonNode t : tools) {
        ObjectNode fn = out.addObject().put("type", "function").putObject("function");
        fn.set("name", t.get("name"));
        fn.set("description", t.get("description"));
        JsonNode schema = t.get("input_schema");
        if (schema != null && schema.isObject() && !schema.has("type")) {
          schema = ((ObjectNode) schema.deepCopy()).put("type", "object"); // AnthropicTool does
        }
        fn.set("parameters", schema);
      }
      if (!chat.has("tool_choice")) {
        chat.put("tool_choice", "auto");
      }
    }
    return chat;
  }

  private static void convert(JsonNode m, ArrayNode messages) {
    String role = m.path("role").asText();
    if ("system".equals(role)) {
      return;
    }
    ObjectNode msg = F.objectNode().put("role", role);
    JsonNode content = m.path("content");
    if (content.isTextual()) {
      msg.put("content", content.asText());
      messages.add(msg);
      return;
    }
    ArrayNode parts = F.arrayNode();
    ArrayNode calls = F.arrayNode();
    StringBuilder reasoning = new StringBuilder();
    for (JsonNode b : content) {
      switch (b.path("type").asText()) {
        case "text" -> {
          if (!b.path("text").asText("").isEmpty()) {
            parts.addObject().put("type", "text").put("text", b.path("text").asText());
          }
        }
        case "image" ->
            parts
                .addObject()
                .put("type", "image_url")
                .putObject("image_url")
                .put("url", imageUrl(b.path("source")));
        case "thinking" -> reasoning.append(b.path("thinking").asText(""));
        case "tool_use" -> {
          ObjectNode call = calls.addObject();
          call.put("id", b.path("id").asText(""));
          call.put("type", "function");
          call.putObject("function")
              .put("name", b.path("name").asText(""))
              .put("arguments", b.path("input").isObject() ? b.get("input").toString() : "{}");
        }
        case "tool_result" -> {
          if ("user".equals(role)) {
            messages
                .addObject()
                .put("role", "tool")
                .put("tool_call_id", b.path("tool_use_id").asText(""))
                .put("content", toolText(b.path("content")));
          } else {
            parts
                .addObject()
                .put("type", "text")
                .put("text", "Tool result: " + toolText(b.path("content")));
          }
        }
        default -> {
          // redacted_thinking and tool_reference carry nothing to render
        }
      }
    }
    if (reasoning.length() > 0) {
      msg.put("reasoning", reasoning.toString());
    }
    if (!calls.isEmpty()) {
      msg.set("tool_calls", calls);
    }
    if (parts.size() == 1 && "text".equals(parts.get(0).path("type").asText())) {
      msg.put("content", parts.get(0).path("text").asText());
    } else if (!parts.isEmpty()) {
      msg.set("content", parts);
    }
    if (!("user".equals(role) && !msg.has("content"))
        && (msg.has("content") || msg.has("tool_calls") || msg.has("reasoning"))) {
      messages.add(msg);
    }
  }

  private static String imageUrl(JsonNode source) {
    if ("url".equals(source.path("type").asText())) {
      return source.path("url").asText("");
    }
    return "data:"
        + source.path("media_type").asText("image/jpeg")
        + ";base64,"
        + source.path("data").asText("");
  }

  private static String toolText(JsonNode content) {
    if (content.isTextual()) {
      return content.asText();
    }
    StringBuilder sb = new StringBuilder();
    for (JsonNode item : content) {
      if ("text".equals(item.path("type").asText())) {
        if (sb.length() > 0) {
          sb.append('\n');
        }
        sb.append(item.path("text").asText(""));
      }
    }
    return sb.toString();
  }

  /** Anthropic usage from the engine's last token, as vLLM reports it. */
  static ObjectNode usage(Emission last) {
    ObjectNode u = F.objectNode();
    u.put("input_tokens", last.promptTokens() - last.cachedPromptTokens());
    u.put("output_tokens", last.index() + 1);
    u.put("cache_creation_input_tokens", 0);
    u.put("cache_read_input_tokens", last.cachedPromptTokens());
    return u;
  }

  static String stopReason(String finishReason) {
    return switch (finishReason) {
      case "length" -> "max_tokens";
      case "tool_calls" -> "tool_use";
      default -> "end_turn";
    };
  }

  /** The whole message. */
  static ObjectNode message(String id, String model, SimRun run) {
    ObjectNode out = F.objectNode();
    out.put("id", id);
    out.put("type", "message");
    out.put("role", "assistant");
    ArrayNode content = out.putArray("content");
    if (!run.text().isEmpty()) {
      content.addObject().put("type", "text").put("text", run.text());
    }
    SimToolCalls.Call call = run.call();
    if (call != null) {
      ObjectNode block = content.addObject().put("type", "tool_use").put("id", call.id());
      block.put("name", call.name());
      block.set("input", parseOrEmpty(call.arguments()));
    }
    out.put("model", model);
    out.put("stop_reason", stopReason(run.finishReason()));
    out.set("usage", usage(run.last()));
    return out;
  }

  private static JsonNode parseOrEmpty(String json) {
    try {
      JsonNode n = JSON.readTree(json);
      return n != null && n.isObject() ? n : F.objectNode();
    } catch (IOException e) {
      return F.objectNode();
    }
  }

  /** Writes a generation as Anthropic's event stream, token by token. */
  static void stream(OutputStream os, String id, String model, SimRun run)
      throws IOException, InterruptedException {
    ObjectNode start = F.objectNode().put("type", "message_start");
    ObjectNode message = start.putObject("message");
    message.put("id", id).put("type", "message").put("role", "assistant");
    message.putArray("content");
    message.put("model", model);
    message.putNull("stop_reason");
    message.putNull("stop_sequence");
    SimRun.Delta d = run.next();
    Emission first = d.emission();
    message
        .putObject("usage")
        .put("input_tokens", first.promptTokens() - first.cachedPromptTokens())
        .put("output_tokens", 0)
        .put("cache_creation_input_tokens", 0)
        .put("cache_read_input_tokens", first.cachedPromptTokens());
    event(os, "message_start", start);
    boolean open = false;
    for (; d != null; d = run.next()) {
      if (!open) {
        ObjectNode block = F.objectNode().put("type", "content_block_start").put("index", 0);
        if (d.call() == null) {
          block.putObject("content_block").put("type", "text").put("text", "");
        } else {
          block
              .putObject("content_block")
              .put("type", "tool_use")
              .put("id", d.call().id())
              .put("name", d.call().name())
              .putObject("input");
        }
        event(os, "content_block_start", block);
        open = true;
      }
      ObjectNode delta = F.objectNode().put("type", "content_block_delta").put("index", 0);
      if (d.call() == null) {
        delta.putObject("delta").put("type", "text_delta").put("text", d.text());
        event(os, "content_block_delta", delta);
      } else if (!d.arguments().isEmpty()) {
        delta.putObject("delta").put("type", "input_json_delta").put("partial_json", d.arguments());
        event(os, "content_block_delta", delta);
      }
    }
    event(
        os, "content_block_stop", F.objectNode().put("type", "content_block_stop").put("index", 0));
    ObjectNode end = F.objectNode().put("type", "message_delta");
    end.putObject("delta").put("stop_reason", stopReason(run.finishReason()));
    end.set("usage", usage(run.last()));
    event(os, "message_delta", end);
    event(os, "message_stop", F.objectNode().put("type", "message_stop"));
  }

  /** An Anthropic error body, as vLLM's Anthropic router answers them. */
  static ObjectNode error(SimApiError e) {
    ObjectNode root = F.objectNode().put("type", "error");
    root.putObject("error").put("type", e.type).put("message", e.getMessage());
    return root;
  }

  private static void event(OutputStream os, String name, JsonNode data) throws IOException {
    os.write(
        ("event: " + name + "\ndata: " + JSON.writeValueAsString(data) + "\n\n")
            .getBytes(StandardCharsets.UTF_8));
    os.flush();
  }
}

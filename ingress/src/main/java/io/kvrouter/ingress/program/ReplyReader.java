package io.kvrouter.ingress.program;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.ingress.api.Endpoint;
import io.kvrouter.ingress.api.Sse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * Reads a turn's answer as the client gets it, whole or streamed, into a {@link Reply}: OpenAI chat
 * completions ({@code choices[0].message}, or its {@code delta}s: content, reasoning, tool calls by
 * index with their argument fragments, {@code finish_reason}, the usage chunk), Anthropic messages
 * ({@code content} blocks, or {@code content_block_start}/{@code _delta} events with {@code
 * text_delta}, {@code thinking_delta} and {@code input_json_delta}, {@code stop_reason}) and
 * Responses ({@code output} items, from the {@code response.completed} event when streamed).
 *
 * <p>A stream is read event by event as it passes (one JSON parse per event); a whole answer is
 * kept until it ends. Either stops reading past {@value #MAX_BYTES} bytes and then gives no reply.
 * Not thread-safe; a stream's elements arrive in order.
 */
final class ReplyReader {

  static final int MAX_BYTES = 8 << 20;

  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  private final Endpoint endpoint;
  private final boolean stream;
  private final ObjectMapper mapper;
  private final StringBuilder pending = new StringBuilder();
  private long bytes;
  private boolean overflow;

  // What a stream told so far.
  private final StringBuilder text = new StringBuilder();
  private final StringBuilder reasoning = new StringBuilder();
  private final TreeMap<Integer, ObjectNode> calls = new TreeMap<>();
  private final TreeMap<Integer, StringBuilder> callArguments = new TreeMap<>();
  private final List<ObjectNode> blocks = new ArrayList<>();
  private final List<StringBuilder> blockText = new ArrayList<>();
  private String stop;
  private int promptTokens = -1;
  private int cachedTokens = -1;
  private int outputTokens = -1;
  private JsonNode completed;

  ReplyReader(Endpoint endpoint, boolean stream, ObjectMapper mapper) {
    this.endpoint = endpoint;
    this.stream = stream;
    this.mapper = mapper;
  }

  /** The next bytes of the answer. */
  void feed(byte[] chunk) {
    if (overflow) {
      return;
    }
    bytes += chunk.length;
    if (bytes > MAX_BYTES) {
      overflow = true;
      pending.setLength(0);
      return;
    }
    pending.append(new String(chunk, StandardCharsets.UTF_8));
    if (!stream) {
      return;
    }
    int end;
    while ((end = pending.indexOf("\n\n")) >= 0) {
      String event = pending.substring(0, end);
      pending.delete(0, end + 2);
      String data = Sse.data(event.replace("\r", ""));
      if (data != null && !data.equals(Sse.DONE)) {
        JsonNode json = Sse.parse(mapper, data);
        if (json != null && json.isObject()) {
          event(json);
        }
      }
    }
  }

  /** The answer once it ended, or null when it could not be read. */
  Reply finish() {
    if (overflow) {
      return null;
    }
    if (!stream) {
      JsonNode whole = Sse.parse(mapper, pending.toString());
      return whole == null || !whole.isObject() ? null : whole(whole);
    }
    if (endpoint == Endpoint.RESPONSES) {
      return completed == null ? null : whole(completed);
    }
    return endpoint == Endpoint.MESSAGES ? streamedMessage() : streamedChat();
  }

  private void event(JsonNode json) {
    switch (endpoint) {
      case CHAT -> chatChunk(json);
      case MESSAGES -> anthropicEvent(json);
      case RESPONSES -> {
        if ("response.completed".equals(json.path("type").asText())
            || "response.incomplete".equals(json.path("type").asText())) {
          completed = json.path("response");
        }
      }
      default -> {}
    }
  }

  private void chatChunk(JsonNode chunk) {
    usage(chunk);
    JsonNode choice = chunk.path("choices").path(0);
    if (choice.isMissingNode()) {
      return;
    }
    JsonNode delta = choice.path("delta");
    if (delta.path("content").isTextual()) {
      text.append(delta.get("content").asText());
    }
    for (String field : new String[] {"reasoning_content", "reasoning"}) {
      if (delta.path(field).isTextual()) {
        reasoning.append(delta.get(field).asText());
        break;
      }
    }
    for (JsonNode call : delta.path("tool_calls")) {
      int index = call.path("index").asInt(calls.size());
      ObjectNode c =
          calls.computeIfAbsent(index, i -> F.objectNode().put("type", "function").putNull("id"));
      if (call.path("id").isTextual()) {
        c.put("id", call.get("id").asText());
      }
      JsonNode fn = call.path("function");
      if (fn.path("name").isTextual()) {
        c.put("name", fn.get("name").asText());
      }
      if (fn.path("arguments").isTextual()) {
        callArguments
            .computeIfAbsent(index, i -> new StringBuilder())
            .append(fn.get("arguments").asText());
      }
    }
    if (choice.path("finish_reason").isTextual()) {
      stop = choice.get("finish_reason").asText();
    }
  }

  private Reply streamedChat() {
    ObjectNode message = F.objectNode().put("role", "assistant");
    message.put("content", text.toString());
    if (!calls.isEmpty()) {
      ArrayNode toolCalls = message.putArray("tool_calls");
      calls.forEach(
          (index, c) -> {
            ObjectNode call = toolCalls.addObject();
            call.set("id", c.get("id"));
            call.put("type", "function");
            call.putObject("function")
                .put("name", c.path("name").asText())
                .put(
                    "arguments", callArguments.getOrDefault(index, new StringBuilder()).toString());
          });
    }
    boolean toolCall = "tool_calls".equals(stop) || !calls.isEmpty();
    return new Reply(
        F.arrayNode().add(message), toolCall, promptTokens, cachedTokens, outputTokens);
  }

  private void anthropicEvent(JsonNode event) {
    switch (event.path("type").asText()) {
      case "message_start" -> {
        JsonNode usage = event.path("message").path("usage");
        anthropicUsage(usage);
      }
      case "content_block_start" -> {
        ObjectNode block = event.path("content_block").deepCopy();
        blocks.add(block);
        blockText.add(new StringBuilder());
      }
      case "content_block_delta" -> {
        int index = Math.min(event.path("index").asInt(blocks.size() - 1), blocks.size() - 1);
        if (index < 0) {
          return;
        }
        JsonNode delta = event.path("delta");
        switch (delta.path("type").asText()) {
          case "text_delta" -> blockText.get(index).append(delta.path("text").asText());
          case "thinking_delta" -> blockText.get(index).append(delta.path("thinking").asText());
          case "input_json_delta" ->
              blockText.get(index).append(delta.path("partial_json").asText());
          case "signature_delta" ->
              blocks.get(index).put("signature", delta.path("signature").asText());
          default -> {}
        }
      }
      case "message_delta" -> {
        if (event.path("delta").path("stop_reason").isTextual()) {
          stop = event.path("delta").get("stop_reason").asText();
        }
        anthropicUsage(event.path("usage"));
      }
      default -> {}
    }
  }

  private void anthropicUsage(JsonNode usage) {
    if (usage.path("input_tokens").isNumber()) {
      promptTokens =
          usage.get("input_tokens").asInt()
              + usage.path("cache_read_input_tokens").asInt(0)
              + usage.path("cache_creation_input_tokens").asInt(0);
    }
    if (usage.path("cache_read_input_tokens").isNumber()) {
      cachedTokens = usage.get("cache_read_input_tokens").asInt();
    }
    if (usage.path("output_tokens").isNumber()) {
      outputTokens = usage.get("output_tokens").asInt();
    }
  }

  private Reply streamedMessage() {
    ArrayNode content = F.arrayNode();
    for (int i = 0; i < blocks.size(); i++) {
      ObjectNode block = blocks.get(i);
      String collected = blockText.get(i).toString();
      switch (block.path("type").asText()) {
        case "text" -> block.put("text", block.path("text").asText() + collected);
        case "thinking" -> block.put("thinking", block.path("thinking").asText() + collected);
        case "tool_use" -> {
          JsonNode input = collected.isEmpty() ? null : Sse.parse(mapper, collected);
          if (input != null && input.isObject()) {
            block.set("input", input);
          }
        }
        default -> {}
      }
      content.add(block);
    }
    return anthropicReply(content, stop);
  }

  private Reply anthropicReply(JsonNode content, String stopReason) {
    ObjectNode message = F.objectNode().put("role", "assistant");
    message.set("content", content);
    boolean toolCall = "tool_use".equals(stopReason);
    for (JsonNode block : content) {
      toolCall |= "tool_use".equals(block.path("type").asText()) && stopReason == null;
    }
    return new Reply(
        F.arrayNode().add(message), toolCall, promptTokens, cachedTokens, outputTokens);
  }

  private Reply whole(JsonNode body) {
    switch (endpoint) {
      case CHAT -> {
        usage(body);
        JsonNode choice = body.path("choices").path(0);
        JsonNode given = choice.path("message");
        ObjectNode message = F.objectNode().put("role", "assistant");
        message.set(
            "content", given.path("content").isTextual() ? given.get("content") : F.textNode(""));
        JsonNode toolCalls = given.path("tool_calls");
        if (toolCalls.isArray() && !toolCalls.isEmpty()) {
          message.set("tool_calls", toolCalls.deepCopy());
        }
        boolean toolCall =
            "tool_calls".equals(choice.path("finish_reason").asText())
                || (toolCalls.isArray() && !toolCalls.isEmpty());
        return new Reply(
            F.arrayNode().add(message), toolCall, promptTokens, cachedTokens, outputTokens);
      }
      case MESSAGES -> {
        anthropicUsage(body.path("usage"));
        return anthropicReply(
            body.path("content").isArray() ? body.get("content").deepCopy() : F.arrayNode(),
            body.path("stop_reason").isTextual() ? body.get("stop_reason").asText() : null);
      }
      case RESPONSES -> {
        JsonNode usage = body.path("usage");
        promptTokens = usage.path("input_tokens").asInt(-1);
        cachedTokens = usage.path("input_tokens_details").path("cached_tokens").asInt(-1);
        outputTokens = usage.path("output_tokens").asInt(-1);
        ArrayNode items = F.arrayNode();
        boolean toolCall = false;
        for (JsonNode item : body.path("output")) {
          items.add(item.deepCopy());
          toolCall |= "function_call".equals(item.path("type").asText());
        }
        return new Reply(items, toolCall, promptTokens, cachedTokens, outputTokens);
      }
      default -> {
        return null;
      }
    }
  }

  /** OpenAI's usage, in a whole answer or the stream's usage chunk. */
  private void usage(JsonNode node) {
    int prompt = Sse.promptTokens(node);
    if (prompt >= 0) {
      promptTokens = prompt;
      cachedTokens = Math.max(0, Sse.cachedTokens(node));
    }
    JsonNode output = node.path("usage").path("completion_tokens");
    if (output.isNumber()) {
      outputTokens = output.asInt();
    }
  }
}

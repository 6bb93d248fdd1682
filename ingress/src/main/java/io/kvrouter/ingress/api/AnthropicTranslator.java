package io.kvrouter.ingress.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Translates OpenAI chat completions (what engines speak) into Anthropic Messages API responses
 * (what {@code /v1/messages} clients expect), whole or streamed.
 *
 * <p>Follows Anthropic's published Messages API and streaming reference: a stream is {@code
 * message_start}, {@code ping}, then per content block {@code content_block_start}, its {@code
 * content_block_delta}s ({@code text_delta} for text, {@code input_json_delta} for a tool call's
 * arguments, {@code thinking_delta} for reasoning) and {@code content_block_stop}, then {@code
 * message_delta} (stop reason, usage) and {@code message_stop}; each as an SSE event with an {@code
 * event:} line. The engine's {@code reasoning} becomes a {@code thinking} block, its content a
 * {@code text} block, each tool call a {@code tool_use} block (id, name, input). Finish reasons map
 * {@code stop}→{@code end_turn} (or {@code stop_sequence} with the matched sequence, when vLLM's
 * {@code stop_reason} names one the client asked for), {@code length}→{@code max_tokens}, {@code
 * tool_calls}→{@code tool_use}.
 *
 * <p>Usage follows Anthropic's contract (total input = {@code input_tokens} + {@code
 * cache_read_input_tokens} + {@code cache_creation_input_tokens}), as vLLM reports it on its own
 * {@code /v1/messages} (PR #40912): {@code input_tokens} are the prompt tokens the engine did not
 * find in its cache, {@code cache_read_input_tokens} those it did ({@code
 * usage.prompt_tokens_details.cached_tokens}), {@code cache_creation_input_tokens} 0 (an engine's
 * prefix cache has no separate writes). A stream's {@code message_start} carries the router's own
 * prompt count (the engine's usage arrives last); {@code message_delta} carries the engine's
 * figures, which the SDKs take as final. One translator per response; not thread-safe.
 */
public final class AnthropicTranslator {

  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final String model;
  private final int inputTokens;
  private final List<String> stopSequences;
  private boolean started;
  private boolean finished;
  private String stopReason = "end_turn";
  private String stopSequence;
  private int outputTokens;
  private int promptTokens = -1;
  private int cachedTokens;
  private String id = "msg_kvrouter";

  /** The open content block: its kind ({@code text}, {@code thinking}, {@code tool_use}). */
  private String blockType;

  private int blockIndex = -1;
  private final Map<Integer, String> toolIds = new HashMap<>();
  private int openToolIndex = -1;

  /**
   * @param model the model name to report
   * @param inputTokens the prompt's token count as the router counted it (the stream reports it in
   *     {@code message_start}, before the engine's usage arrives)
   * @param stopSequences the request's {@code stop_sequences} (to report which one matched)
   */
  public AnthropicTranslator(String model, int inputTokens, List<String> stopSequences) {
    this.model = model;
    this.inputTokens = inputTokens;
    this.stopSequences = List.copyOf(stopSequences);
  }

  public AnthropicTranslator(String model, int inputTokens) {
    this(model, inputTokens, List.of());
  }

  /** A whole chat completion as an Anthropic message. */
  public ObjectNode message(JsonNode chat) {
    ObjectNode out = JSON.objectNode();
    out.put("id", messageId(chat));
    out.put("type", "message");
    out.put("role", "assistant");
    out.put("model", model);
    JsonNode choice = chat.path("choices").path(0);
    JsonNode message = choice.path("message");
    ArrayNode content = out.putArray("content");
    String reasoning =
        message.path("reasoning").asText(message.path("reasoning_content").asText(""));
    if (!reasoning.isEmpty()) {
      content.addObject().put("type", "thinking").put("thinking", reasoning).put("signature", "");
    }
    String text = message.path("content").asText("");
    JsonNode calls = message.path("tool_calls");
    if (!text.isEmpty() || !calls.isArray() || calls.isEmpty()) {
      content.addObject().put("type", "text").put("text", text);
    }
    for (JsonNode call : calls) {
      ObjectNode block = content.addObject().put("type", "tool_use");
      block.put("id", call.path("id").asText(""));
      block.put("name", call.path("function").path("name").asText(""));
      block.set("input", input(call.path("function").path("arguments").asText("")));
    }
    finish(choice);
    out.put("stop_reason", stopReason);
    if (stopSequence == null) {
      out.putNull("stop_sequence");
    } else {
      out.put("stop_sequence", stopSequence);
    }
    JsonNode usage = chat.path("usage");
    int prompt = usage.path("prompt_tokens").asInt(inputTokens);
    int cached = usage.path("prompt_tokens_details").path("cached_tokens").asInt(0);
    out.set("usage", usage(prompt, cached, usage.path("completion_tokens").asInt(0)));
    return out;
  }

  private static ObjectNode usage(int prompt, int cached, int output) {
    ObjectNode u = JSON.objectNode();
    u.put("input_tokens", Math.max(0, prompt - cached));
    u.put("cache_creation_input_tokens", 0);
    u.put("cache_read_input_tokens", cached);
    u.put("output_tokens", output);
    return u;
  }

  private static JsonNode input(String arguments) {
    if (arguments.isEmpty()) {
      return JSON.objectNode();
    }
    try {
      JsonNode n = MAPPER.readTree(arguments);
      return n != null && n.isObject() ? n : JSON.objectNode();
    } catch (Exception malformed) {
      return JSON.objectNode();
    }
  }

  private void finish(JsonNode choice) {
    if (!choice.hasNonNull("finish_reason")) {
      return;
    }
    stopReason =
        switch (choice.get("finish_reason").asText()) {
          case "length" -> "max_tokens";
          case "tool_calls" -> "tool_use";
          default -> "end_turn";
        };
    JsonNode matched = choice.path("stop_reason");
    if ("end_turn".equals(stopReason)
        && matched.isTextual()
        && stopSequences.contains(matched.asText())) {
      stopReason = "stop_sequence";
      stopSequence = matched.asText();
    }
  }

  /** The Anthropic SSE events for one OpenAI stream chunk (its JSON). */
  public List<String> onChunk(JsonNode chunk) {
    List<String> events = new ArrayList<>(3);
    if (!started) {
      id = messageId(chunk);
      start(events);
    }
    for (JsonNode choice : chunk.path("choices")) {
      JsonNode delta = choice.path("delta");
      String reasoning = delta.path("reasoning").asText(delta.path("reasoning_content").asText(""));
      if (!reasoning.isEmpty()) {
        open("thinking", null, events);
        delta(events, JSON.objectNode().put("type", "thinking_delta").put("thinking", reasoning));
      }
      String text = delta.path("content").asText("");
      if (!text.isEmpty()) {
        open("text", null, events);
        delta(events, JSON.objectNode().put("type", "text_delta").put("text", text));
      }
      for (JsonNode call : delta.path("tool_calls")) {
        toolCallDelta(call, events);
      }
      finish(choice);
    }
    JsonNode usage = chunk.path("usage");
    if (usage.isObject()) {
      outputTokens = usage.path("completion_tokens").asInt(outputTokens);
      promptTokens = usage.path("prompt_tokens").asInt(promptTokens);
      cachedTokens = usage.path("prompt_tokens_details").path("cached_tokens").asInt(cachedTokens);
    }
    return events;
  }

  private void toolCallDelta(JsonNode call, List<String> events) {
    int index = call.path("index").asInt(0);
    String callId = call.path("id").asText("");
    String name = call.path("function").path("name").asText("");
    if (!callId.isEmpty() && !callId.equals(toolIds.get(index))) {
      toolIds.put(index, callId);
      ObjectNode block = JSON.objectNode().put("type", "tool_use").put("id", callId);
      block.put("name", name);
      block.putObject("input");
      open("tool_use", block, events);
      openToolIndex = index;
    }
    String arguments = call.path("function").path("arguments").asText("");
    if (!arguments.isEmpty() && index == openToolIndex) {
      delta(
          events, JSON.objectNode().put("type", "input_json_delta").put("partial_json", arguments));
    }
  }

  /** Starts a block of {@code type} unless one is open (tool calls always start a new one). */
  private void open(String type, ObjectNode toolBlock, List<String> events) {
    if (toolBlock == null && type.equals(blockType)) {
      return;
    }
    close(events);
    blockIndex++;
    blockType = type;
    ObjectNode start =
        JSON.objectNode().put("type", "content_block_start").put("index", blockIndex);
    if (toolBlock != null) {
      start.set("content_block", toolBlock);
    } else if (type.equals("text")) {
      start.putObject("content_block").put("type", "text").put("text", "");
    } else {
      start.putObject("content_block").put("type", "thinking").put("thinking", "");
    }
    events.add(event("content_block_start", start));
  }

  private void delta(List<String> events, ObjectNode delta) {
    ObjectNode e = JSON.objectNode().put("type", "content_block_delta").put("index", blockIndex);
    e.set("delta", delta);
    events.add(event("content_block_delta", e));
  }

  private void close(List<String> events) {
    if (blockType == null) {
      return;
    }
    if (blockType.equals("thinking")) {
      ObjectNode sig = JSON.objectNode().put("type", "signature_delta").put("signature", "");
      delta(events, sig);
    }
    events.add(
        event(
            "content_block_stop",
            JSON.objectNode().put("type", "content_block_stop").put("index", blockIndex)));
    blockType = null;
    openToolIndex = -1;
  }

  /** The closing events, once the engine's stream ended ({@code [DONE]} or end of body). */
  public List<String> onEnd() {
    List<String> events = new ArrayList<>(4);
    if (finished) {
      return events;
    }
    if (!started) {
      start(events);
    }
    finished = true;
    if (blockIndex < 0) {
      open("text", null, events); // an empty answer still has its (empty) text block
    }
    close(events);
    ObjectNode delta = JSON.objectNode().put("type", "message_delta");
    ObjectNode d = delta.putObject("delta").put("stop_reason", stopReason);
    if (stopSequence == null) {
      d.putNull("stop_sequence");
    } else {
      d.put("stop_sequence", stopSequence);
    }
    delta.set(
        "usage", usage(promptTokens < 0 ? inputTokens : promptTokens, cachedTokens, outputTokens));
    events.add(event("message_delta", delta));
    events.add(event("message_stop", JSON.objectNode().put("type", "message_stop")));
    return events;
  }

  /** An error event in the middle of a stream. */
  public String onError(String message) {
    finished = true;
    ObjectNode err = JSON.objectNode().put("type", "error");
    err.putObject("error").put("type", "api_error").put("message", message);
    return event("error", err);
  }

  /** Engine-reported cached prompt tokens seen so far in the stream, or 0. */
  public int cachedTokens() {
    return cachedTokens;
  }

  private void start(List<String> events) {
    started = true;
    ObjectNode start = JSON.objectNode().put("type", "message_start");
    ObjectNode message = start.putObject("message");
    message.put("id", id);
    message.put("type", "message");
    message.put("role", "assistant");
    message.putArray("content");
    message.put("model", model);
    message.putNull("stop_reason");
    message.putNull("stop_sequence");
    message.putObject("usage").put("input_tokens", inputTokens).put("output_tokens", 0);
    events.add(event("message_start", start));
    events.add(event("ping", JSON.objectNode().put("type", "ping")));
  }

  private static String messageId(JsonNode chat) {
    String raw = chat.path("id").asText("");
    return "msg_" + (raw.isEmpty() ? "kvrouter" : raw.replace("chatcmpl-", ""));
  }

  private static String event(String name, ObjectNode payload) {
    return Sse.event(name, payload.toString());
  }
}

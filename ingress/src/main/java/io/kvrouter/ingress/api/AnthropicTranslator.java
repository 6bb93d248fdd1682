package io.kvrouter.ingress.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/**
 * Translates OpenAI chat completions (what engines speak) into Anthropic Messages API responses
 * (what {@code /v1/messages} clients expect), whole or streamed.
 *
 * <p>Follows Anthropic's published Messages API and streaming reference: a stream is {@code
 * message_start}, {@code content_block_start}, {@code ping}, any number of {@code
 * content_block_delta} ({@code text_delta}), {@code content_block_stop}, {@code message_delta}
 * (stop reason, output tokens), {@code message_stop}; each as an SSE event with an {@code event:}
 * line. Finish reasons map {@code stop}→{@code end_turn}, {@code length}→{@code max_tokens}. One
 * translator per streamed response; not thread-safe.
 */
public final class AnthropicTranslator {

  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  private final String model;
  private final int inputTokens;
  private boolean started;
  private boolean finished;
  private String stopReason = "end_turn";
  private int outputTokens;
  private int cachedTokens;
  private String id = "msg_kvrouter";

  /**
   * @param model the model name to report
   * @param inputTokens the prompt's token count as the router counted it (the stream reports it in
   *     {@code message_start}, before the engine's usage arrives)
   */
  public AnthropicTranslator(String model, int inputTokens) {
    this.model = model;
    this.inputTokens = inputTokens;
  }

  /** A whole chat completion as an Anthropic message. */
  public ObjectNode message(JsonNode chat) {
    ObjectNode out = JSON.objectNode();
    out.put("id", messageId(chat));
    out.put("type", "message");
    out.put("role", "assistant");
    out.put("model", model);
    JsonNode choice = chat.path("choices").path(0);
    out.putArray("content")
        .addObject()
        .put("type", "text")
        .put("text", choice.path("message").path("content").asText(""));
    out.put("stop_reason", stopReason(choice.path("finish_reason").asText("stop")));
    out.putNull("stop_sequence");
    ObjectNode usage = out.putObject("usage");
    usage.put("input_tokens", chat.path("usage").path("prompt_tokens").asInt(inputTokens));
    usage.put("output_tokens", chat.path("usage").path("completion_tokens").asInt(0));
    usage.put(
        "cache_read_input_tokens",
        chat.path("usage").path("prompt_tokens_details").path("cached_tokens").asInt(0));
    return out;
  }

  /** The Anthropic SSE events for one OpenAI stream chunk (its JSON). */
  public List<String> onChunk(JsonNode chunk) {
    List<String> events = new ArrayList<>(3);
    if (!started) {
      id = messageId(chunk);
      start(events);
    }
    for (JsonNode choice : chunk.path("choices")) {
      String text = choice.path("delta").path("content").asText("");
      if (!text.isEmpty()) {
        ObjectNode delta = JSON.objectNode();
        delta.put("type", "content_block_delta");
        delta.put("index", 0);
        delta.putObject("delta").put("type", "text_delta").put("text", text);
        events.add(event("content_block_delta", delta));
      }
      if (choice.hasNonNull("finish_reason")) {
        stopReason = stopReason(choice.get("finish_reason").asText());
      }
    }
    JsonNode usage = chunk.path("usage");
    if (usage.isObject()) {
      outputTokens = usage.path("completion_tokens").asInt(outputTokens);
      cachedTokens = usage.path("prompt_tokens_details").path("cached_tokens").asInt(cachedTokens);
    }
    return events;
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
    ObjectNode stop = JSON.objectNode().put("type", "content_block_stop").put("index", 0);
    events.add(event("content_block_stop", stop));
    ObjectNode delta = JSON.objectNode().put("type", "message_delta");
    delta.putObject("delta").put("stop_reason", stopReason).putNull("stop_sequence");
    delta.putObject("usage").put("output_tokens", outputTokens);
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
    ObjectNode block = JSON.objectNode().put("type", "content_block_start").put("index", 0);
    block.putObject("content_block").put("type", "text").put("text", "");
    events.add(event("content_block_start", block));
    events.add(event("ping", JSON.objectNode().put("type", "ping")));
  }

  private static String messageId(JsonNode chat) {
    String raw = chat.path("id").asText("");
    return "msg_" + (raw.isEmpty() ? "kvrouter" : raw.replace("chatcmpl-", ""));
  }

  private static String stopReason(String finishReason) {
    return switch (finishReason) {
      case "length" -> "max_tokens";
      case "stop" -> "end_turn";
      default -> "end_turn";
    };
  }

  private static String event(String name, ObjectNode payload) {
    return "event: " + name + "\ndata: " + payload + "\n\n";
  }
}

package io.kvrouter.ingress.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/** Server-sent events as OpenAI-compatible engines stream them: {@code data: <json>\n\n}. */
public final class Sse {

  public static final String DONE = "[DONE]";

  private Sse() {}

  /** One frame carrying {@code payload}. */
  public static String frame(String payload) {
    return "data: " + payload + "\n\n";
  }

  /** One named frame ({@code event: name}), as Anthropic's stream uses. */
  public static String event(String name, String payload) {
    return "event: " + name + "\ndata: " + payload + "\n\n";
  }

  /**
   * The data of one SSE event (the lines starting with {@code data:} joined by newlines), or {@code
   * null} when it has none (comments, keep-alives).
   */
  public static String data(String event) {
    StringBuilder out = null;
    for (String line : event.split("\n", -1)) {
      String l = line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
      if (l.startsWith("data:")) {
        String value = l.substring(5);
        if (value.startsWith(" ")) {
          value = value.substring(1);
        }
        if (out == null) {
          out = new StringBuilder(value);
        } else {
          out.append('\n').append(value);
        }
      }
    }
    return out == null ? null : out.toString();
  }

  /**
   * The engine-reported cached prompt tokens in a response or usage chunk, or -1: OpenAI's {@code
   * usage.prompt_tokens_details.cached_tokens}, Responses' {@code
   * usage.input_tokens_details.cached_tokens} or Anthropic's {@code usage.cache_read_input_tokens}.
   */
  public static int cachedTokens(JsonNode node) {
    JsonNode usage = node.path("usage");
    for (JsonNode cached :
        new JsonNode[] {
          usage.path("prompt_tokens_details").path("cached_tokens"),
          usage.path("input_tokens_details").path("cached_tokens"),
          usage.path("cache_read_input_tokens")
        }) {
      if (cached.isNumber()) {
        return cached.asInt();
      }
    }
    return -1;
  }

  /** The prompt tokens in a response or usage chunk, or -1. */
  public static int promptTokens(JsonNode node) {
    JsonNode n = node.path("usage").path("prompt_tokens");
    return n.isNumber() ? n.asInt() : -1;
  }

  /** Parses JSON leniently: {@code null} when it is not JSON. */
  public static JsonNode parse(ObjectMapper mapper, String json) {
    try {
      return mapper.readTree(json);
    } catch (Exception e) {
      return null;
    }
  }
}

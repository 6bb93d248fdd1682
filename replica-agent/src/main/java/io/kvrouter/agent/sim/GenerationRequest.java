package io.kvrouter.agent.sim;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * A parsed {@code /v1/completions} or {@code /v1/chat/completions} body.
 *
 * @param chat true for chat completions
 * @param model the requested model (null: the served one)
 * @param prompt prompt token ids
 * @param maxTokens tokens to generate
 * @param stream SSE or one JSON body
 * @param includeUsage {@code stream_options.include_usage}
 * @param cacheSalt vLLM's {@code cache_salt}, or null
 * @param toolCall the tool call this turn answers with, or null for text
 * @param roles the roles of the chat messages as rendered (empty for completions)
 */
record GenerationRequest(
    boolean chat,
    String model,
    int[] prompt,
    int maxTokens,
    boolean stream,
    boolean includeUsage,
    String cacheSalt,
    SimToolCalls.Call toolCall,
    List<String> roles) {

  static final int DEFAULT_MAX_TOKENS = 16;

  /** Parses a completions body: prompt as text, [text], [int] or [[int]] (one prompt only). */
  static GenerationRequest completion(JsonNode body, SimTokenizer tokenizer) {
    JsonNode p = body.get("prompt");
    int[] prompt;
    if (p == null || p.isNull()) {
      throw ApiError.badRequest("'prompt' is required", "prompt");
    } else if (p.isTextual()) {
      prompt = tokenizer.encodePrompt(p.asText());
    } else if (p.isArray() && p.size() > 0 && p.get(0).isIntegralNumber()) {
      prompt = tokenIds(p);
    } else if (p.isArray() && p.size() == 1 && p.get(0).isTextual()) {
      prompt = tokenizer.encodePrompt(p.get(0).asText());
    } else if (p.isArray() && p.size() == 1 && p.get(0).isArray()) {
      prompt = tokenIds(p.get(0));
    } else if (p.isArray() && p.size() > 1) {
      throw ApiError.badRequest("only one prompt per request is supported", "prompt");
    } else {
      throw ApiError.badRequest(
          "'prompt' must be a string, a list of token ids or a list of one" + " of those",
          "prompt");
    }
    return common(body, false, prompt, "max_tokens", null, List.of());
  }

  /**
   * Parses a chat body, normalizes it as vLLM does ({@link VllmChat}) and renders and encodes it
   * with {@code tokenizer}; decides whether the turn answers with a tool call ({@link
   * SimToolCalls}).
   *
   * @param requestId makes a tool call's id unique
   */
  static GenerationRequest chat(JsonNode body, SimTokenizer tokenizer, String requestId) {
    return chat(body, tokenizer, requestId, true);
  }

  /** A chat request converted from a Responses request (its tools already as vLLM makes them). */
  static GenerationRequest responses(JsonNode chat, SimTokenizer tokenizer, String requestId) {
    return chat(chat, tokenizer, requestId, false);
  }

  private static GenerationRequest chat(
      JsonNode body, SimTokenizer tokenizer, String requestId, boolean dumpTools) {
    List<String> roles = new ArrayList<>();
    for (String[] m : messages(body)) { // validates the shape whatever the tokenizer does
      roles.add(m[0]);
    }
    JsonNode normalized = VllmChat.normalize(body, dumpTools);
    return common(
        body,
        true,
        tokenizer.encodeChat(normalized, true),
        "max_completion_tokens",
        SimToolCalls.plan(normalized, requestId),
        List.copyOf(roles));
  }

  /** Tokens the engine generates: a tool call ends once written, text runs to {@code max}. */
  int generated() {
    return toolCall == null ? maxTokens : Math.min(maxTokens, toolCall.tokens());
  }

  /** Role and text content of each message; content may be a string or text parts. */
  static List<String[]> messages(JsonNode body) {
    JsonNode msgs = body.get("messages");
    if (msgs == null || !msgs.isArray() || msgs.isEmpty()) {
      throw ApiError.badRequest("'messages' must be a non-empty list", "messages");
    }
    List<String[]> out = new ArrayList<>();
    for (JsonNode m : msgs) {
      JsonNode role = m.get("role");
      if (role == null || !role.isTextual()) {
        throw ApiError.badRequest("every message needs a string 'role'", "messages");
      }
      JsonNode c = m.get("content");
      StringBuilder content = new StringBuilder();
      if (c != null && c.isTextual()) {
        content.append(c.asText());
      } else if (c != null && c.isArray()) {
        for (JsonNode part : c) {
          if (part.has("text")) {
            content.append(part.get("text").asText());
          }
        }
      } else if (c != null && !c.isNull()) {
        throw ApiError.badRequest(
            "message 'content' must be a string or a list of parts", "messages");
      }
      out.add(new String[] {role.asText(), content.toString()});
    }
    return out;
  }

  private static GenerationRequest common(
      JsonNode body,
      boolean chat,
      int[] prompt,
      String altMaxName,
      SimToolCalls.Call toolCall,
      List<String> roles) {
    if (prompt.length == 0) {
      throw ApiError.badRequest("the prompt is empty", "prompt");
    }
    int maxTokens = DEFAULT_MAX_TOKENS;
    JsonNode mt = body.has("max_tokens") ? body.get("max_tokens") : body.get(altMaxName);
    if (mt != null && !mt.isNull()) {
      if (!mt.isIntegralNumber() || mt.asLong() < 1 || mt.asLong() > 1_000_000) {
        throw ApiError.badRequest(
            "'max_tokens' must be an integer from 1 to 1000000", "max_tokens");
      }
      maxTokens = mt.asInt();
    }
    JsonNode n = body.get("n");
    if (n != null && !n.isNull() && n.asInt(1) != 1) {
      throw ApiError.badRequest("only n = 1 is supported", "n");
    }
    JsonNode stream = body.get("stream");
    if (stream != null && !stream.isNull() && !stream.isBoolean()) {
      throw ApiError.badRequest("'stream' must be a boolean", "stream");
    }
    JsonNode so = body.get("stream_options");
    boolean usage = so != null && so.path("include_usage").asBoolean(false);
    JsonNode model = body.get("model");
    JsonNode salt = body.get("cache_salt");
    return new GenerationRequest(
        chat,
        model == null || model.isNull() ? null : model.asText(),
        prompt,
        maxTokens,
        stream != null && stream.asBoolean(),
        usage,
        salt == null || salt.isNull() ? null : salt.asText(),
        toolCall,
        roles);
  }

  private static int[] tokenIds(JsonNode arr) {
    int[] out = new int[arr.size()];
    for (int i = 0; i < out.length; i++) {
      JsonNode t = arr.get(i);
      if (!t.isIntegralNumber() || t.asLong() < 0 || t.asLong() > Integer.MAX_VALUE) {
        throw ApiError.badRequest("token ids must be non-negative integers", "prompt");
      }
      out[i] = t.asInt();
    }
    return out;
  }
}

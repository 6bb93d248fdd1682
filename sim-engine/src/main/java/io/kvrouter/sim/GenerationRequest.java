package io.kvrouter.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.protocol.keys.MediaPrompt;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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
 * @param media the chat's images at their placeholder tokens in {@code prompt} (empty for none)
 */
public record GenerationRequest(
    boolean chat,
    String model,
    int[] prompt,
    int maxTokens,
    boolean stream,
    boolean includeUsage,
    String cacheSalt,
    SimToolCalls.Call toolCall,
    List<String> roles,
    List<MediaPrompt.Item> media) {

  /**
   * How the engine treats images: placeholder expansion and the model id they are hashed under.
   *
   * @param images the engine's image settings
   * @param modelId the engine's {@code model_id} for image hashes
   */
  public record Media(MediaPrompt.Settings images, String modelId) {

    /** The defaults under model id {@code "sim-model"} (tests). */
    static final Media DEFAULTS = new Media(MediaPrompt.Settings.DEFAULTS, "sim-model");
  }

  static final int DEFAULT_MAX_TOKENS = 16;

  private static final ObjectMapper JSON = new ObjectMapper();

  /** Parses a completions body: prompt as text, [text], [int] or [[int]] (one prompt only). */
  static GenerationRequest completion(JsonNode body, SimTokenizer tokenizer) {
    JsonNode p = body.get("prompt");
    int[] prompt;
    if (p == null || p.isNull()) {
      throw SimApiError.badRequest("'prompt' is required", "prompt");
    } else if (p.isTextual()) {
      prompt = tokenizer.encodePrompt(p.asText());
    } else if (p.isArray() && p.size() > 0 && p.get(0).isIntegralNumber()) {
      prompt = tokenIds(p);
    } else if (p.isArray() && p.size() == 1 && p.get(0).isTextual()) {
      prompt = tokenizer.encodePrompt(p.get(0).asText());
    } else if (p.isArray() && p.size() == 1 && p.get(0).isArray()) {
      prompt = tokenIds(p.get(0));
    } else if (p.isArray() && p.size() > 1) {
      throw SimApiError.badRequest("only one prompt per request is supported", "prompt");
    } else {
      throw SimApiError.badRequest(
          "'prompt' must be a string, a list of token ids or a list of one" + " of those",
          "prompt");
    }
    return common(body, false, prompt, "max_tokens", null, List.of(), List.of());
  }

  /**
   * Parses a chat body, normalizes it as vLLM does ({@link VllmChat}) and renders and encodes it
   * with {@code tokenizer}; decides whether the turn answers with a tool call ({@link
   * SimToolCalls}).
   *
   * @param toolCallId the id a tool call this turn makes carries
   */
  static GenerationRequest chat(JsonNode body, SimTokenizer tokenizer, String toolCallId) {
    return chat(body, tokenizer, toolCallId, Media.DEFAULTS);
  }

  /**
   * {@link #chat(JsonNode, SimTokenizer, String)} expanding and naming images as {@code media} says
   * ({@link MediaPrompt}): each {@code image_url} part becomes its placeholder tokens, and the
   * request carries each image's identifier and placeholder range.
   *
   * @throws SimApiError 400 for a bad image part
   */
  public static GenerationRequest chat(
      JsonNode body, SimTokenizer tokenizer, String toolCallId, Media media) {
    return chat(body, tokenizer, toolCallId, true, media);
  }

  /** A chat request converted from a Responses request (its tools already as vLLM makes them). */
  static GenerationRequest responses(
      JsonNode chat, SimTokenizer tokenizer, String toolCallId, Media media) {
    return chat(chat, tokenizer, toolCallId, false, media);
  }

  private static GenerationRequest chat(
      JsonNode body, SimTokenizer tokenizer, String toolCallId, boolean dumpTools, Media media) {
    List<String> roles = new ArrayList<>();
    for (String[] m : messages(body)) { // validates the shape whatever the tokenizer does
      roles.add(m[0]);
    }
    JsonNode normalized = VllmChat.normalize(body, dumpTools);
    List<String> identifiers = imageIdentifiers(body, media.modelId());
    int[] prompt;
    List<MediaPrompt.Item> items;
    boolean continued = body.path("continue_final_message").asBoolean(false);
    if (continued && body.path("add_generation_prompt").asBoolean(true)) {
      // vLLM's ChatCompletionRequest.check_generation_prompt (add_generation_prompt defaults true)
      throw SimApiError.badRequest(
          "Cannot set both `continue_final_message` and `add_generation_prompt` to True.",
          "continue_final_message");
    }
    try {
      if (continued && !identifiers.isEmpty()) {
        throw SimApiError.badRequest(
            "this engine cannot continue a chat with images", "continue_final_message");
      } else if (continued) {
        prompt = tokenizer.encodeChatContinued(normalized);
        items = List.of();
      } else if (identifiers.isEmpty()) {
        prompt = tokenizer.encodeChat(normalized, true);
        items = List.of();
      } else {
        prompt = tokenizer.encodeChat(normalized, true, media.images());
        items = MediaPrompt.locate(prompt, identifiers, media.images());
      }
    } catch (MediaPrompt.BadImageException e) {
      throw SimApiError.badRequest(e.getMessage(), "messages");
    }
    return common(
        body,
        true,
        prompt,
        "max_completion_tokens",
        SimToolCalls.plan(normalized, toolCallId),
        List.copyOf(roles),
        items);
  }

  /** The identifiers of the chat's images in prompt order; 400 for a bad image part. */
  @SuppressWarnings("unchecked")
  private static List<String> imageIdentifiers(JsonNode body, String modelId) {
    boolean any = false;
    for (JsonNode m : body.get("messages")) {
      for (JsonNode part : m.path("content")) {
        any |= "image_url".equals(part.path("type").asText());
      }
    }
    if (!any) {
      return List.of();
    }
    try {
      List<Map<String, Object>> messages = JSON.convertValue(body.get("messages"), List.class);
      return MediaPrompt.identifiers(MediaPrompt.images(messages), modelId);
    } catch (MediaPrompt.BadImageException e) {
      throw SimApiError.badRequest(e.getMessage(), "messages");
    }
  }

  /** Tokens the engine generates: a tool call ends once written, text runs to {@code max}. */
  int generated() {
    return toolCall == null ? maxTokens : Math.min(maxTokens, toolCall.tokens());
  }

  /**
   * Role and text content of each message; content may be a string or text parts, and a list with
   * image parts is flattened as vLLM's string content format does ({@link MediaPrompt#flatten}: one
   * {@link MediaPrompt#MARKER} per image in front of the text).
   */
  static List<String[]> messages(JsonNode body) {
    JsonNode msgs = body.get("messages");
    if (msgs == null || !msgs.isArray() || msgs.isEmpty()) {
      throw SimApiError.badRequest("'messages' must be a non-empty list", "messages");
    }
    List<String[]> out = new ArrayList<>();
    for (JsonNode m : msgs) {
      JsonNode role = m.get("role");
      if (role == null || !role.isTextual()) {
        throw SimApiError.badRequest("every message needs a string 'role'", "messages");
      }
      JsonNode c = m.get("content");
      StringBuilder content = new StringBuilder();
      if (c != null && c.isTextual()) {
        content.append(c.asText());
      } else if (c != null && c.isArray() && hasImage(c)) {
        content.append(MediaPrompt.flatten(JSON.convertValue(c, List.class)));
      } else if (c != null && c.isArray()) {
        for (JsonNode part : c) {
          if (part.has("text")) {
            content.append(part.get("text").asText());
          }
        }
      } else if (c != null && !c.isNull()) {
        throw SimApiError.badRequest(
            "message 'content' must be a string or a list of parts", "messages");
      }
      out.add(new String[] {role.asText(), content.toString()});
    }
    return out;
  }

  private static boolean hasImage(JsonNode parts) {
    for (JsonNode part : parts) {
      if ("image_url".equals(part.path("type").asText())) {
        return true;
      }
    }
    return false;
  }

  private static GenerationRequest common(
      JsonNode body,
      boolean chat,
      int[] prompt,
      String altMaxName,
      SimToolCalls.Call toolCall,
      List<String> roles,
      List<MediaPrompt.Item> media) {
    if (prompt.length == 0) {
      throw SimApiError.badRequest("the prompt is empty", "prompt");
    }
    int maxTokens = DEFAULT_MAX_TOKENS;
    JsonNode mt = body.has("max_tokens") ? body.get("max_tokens") : body.get(altMaxName);
    if (mt != null && !mt.isNull()) {
      if (!mt.isIntegralNumber() || mt.asLong() < 1 || mt.asLong() > 1_000_000) {
        throw SimApiError.badRequest(
            "'max_tokens' must be an integer from 1 to 1000000", "max_tokens");
      }
      maxTokens = mt.asInt();
    }
    JsonNode n = body.get("n");
    if (n != null && !n.isNull() && n.asInt(1) != 1) {
      throw SimApiError.badRequest("only n = 1 is supported", "n");
    }
    JsonNode stream = body.get("stream");
    if (stream != null && !stream.isNull() && !stream.isBoolean()) {
      throw SimApiError.badRequest("'stream' must be a boolean", "stream");
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
        roles,
        media);
  }

  private static int[] tokenIds(JsonNode arr) {
    int[] out = new int[arr.size()];
    for (int i = 0; i < out.length; i++) {
      JsonNode t = arr.get(i);
      if (!t.isIntegralNumber() || t.asLong() < 0 || t.asLong() > Integer.MAX_VALUE) {
        throw SimApiError.badRequest("token ids must be non-negative integers", "prompt");
      }
      out[i] = t.asInt();
    }
    return out;
  }
}

package io.kvrouter.ingress.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks the shape of an inference request body and turns it into an {@link InferenceRequest}, or
 * throws {@link ApiException} with an error naming the offending field.
 *
 * <p>It checks what the router itself relies on (model, prompt or messages, stream flag, token
 * limits) and the types of the sampling parameters ({@link SamplingFields}); those pass through to
 * the engine untouched and the engine checks their ranges. Chat messages and tools are also kept in
 * the form vLLM hands its chat template ({@link TemplateInputs}), so the router renders the
 * engine's prompt. Anthropic requests are validated and translated by {@link AnthropicRequests},
 * Responses requests by {@link ResponsesRequests}.
 */
public final class RequestValidator {

  /** Hard ceiling on {@code max_tokens}, whatever the model: anything above is absurd. */
  public static final int MAX_TOKENS_CEILING = 1 << 20;

  private static final Set<String> ROLES =
      Set.of("system", "developer", "user", "assistant", "tool");

  /**
   * Content part types of chat messages: text, and the media and other parts OpenAI defines, which
   * pass to the engine (media do not count in the router's prompt: see {@link
   * io.kvrouter.ingress.tokenize.ChatContent}).
   */
  private static final Set<String> PART_TYPES =
      Set.of("text", "image_url", "input_audio", "video_url", "file", "refusal");

  private final AnthropicRequests anthropic;
  private final ResponsesRequests responses;

  public RequestValidator() {
    this.anthropic = new AnthropicRequests();
    this.responses = new ResponsesRequests();
  }

  /** Validates a parsed body for {@code endpoint}. */
  public InferenceRequest validate(Endpoint endpoint, JsonNode body) {
    if (body == null || !body.isObject()) {
      throw fail("The request body must be a JSON object.", null, "invalid_type");
    }
    ObjectNode obj = (ObjectNode) body;
    String model = requiredString(obj, "model");
    boolean stream = optionalBoolean(obj, "stream");
    SamplingFields.check(endpoint, obj);
    return switch (endpoint) {
      case COMPLETIONS -> completions(obj, model, stream);
      case CHAT -> chat(obj, model, stream);
      case MESSAGES -> anthropic.messages(obj, model, stream);
      case COUNT_TOKENS -> anthropic.countTokens(obj, model);
      case RESPONSES -> responses.responses(obj, model, stream);
    };
  }

  private InferenceRequest completions(ObjectNode obj, String model, boolean stream) {
    int maxTokens = maxTokens(obj, "max_tokens", false);
    JsonNode prompt = obj.get("prompt");
    if (prompt == null || prompt.isNull()) {
      throw fail("'prompt' is required.", "prompt", "missing_required_parameter");
    }
    if (prompt.isArray()
        && prompt.size() == 1
        && (prompt.get(0).isTextual() || prompt.get(0).isArray())) {
      prompt = prompt.get(0); // a batch of one is the same request
    }
    if (prompt.isTextual()) {
      if (prompt.asText().isEmpty()) {
        throw fail("'prompt' must not be empty.", "prompt", "empty_prompt");
      }
      return new InferenceRequest(
          Endpoint.COMPLETIONS,
          model,
          stream,
          maxTokens,
          prompt.asText(),
          null,
          null,
          null,
          Map.of(),
          obj);
    }
    if (prompt.isArray()) {
      if (prompt.isEmpty()) {
        throw fail("'prompt' must not be empty.", "prompt", "empty_prompt");
      }
      int[] ids = new int[prompt.size()];
      for (int i = 0; i < ids.length; i++) {
        JsonNode t = prompt.get(i);
        if (t.isTextual() || t.isArray()) {
          throw fail(
              "Batched prompts are not supported; send one prompt per request.",
              "prompt",
              "unsupported_batch");
        }
        if (!t.isIntegralNumber() || !t.canConvertToInt() || t.asInt() < 0) {
          throw fail("'prompt' token ids must be non-negative integers.", "prompt", "invalid_type");
        }
        ids[i] = t.asInt();
      }
      return new InferenceRequest(
          Endpoint.COMPLETIONS, model, stream, maxTokens, null, ids, null, null, Map.of(), obj);
    }
    throw fail("'prompt' must be a string or an array of token ids.", "prompt", "invalid_type");
  }

  private InferenceRequest chat(ObjectNode obj, String model, boolean stream) {
    int maxTokens = maxTokens(obj, "max_completion_tokens", false);
    if (maxTokens == 0) {
      maxTokens = maxTokens(obj, "max_tokens", false);
    }
    List<Map<String, Object>> messages = messages(obj.get("messages"), "messages");
    List<Map<String, Object>> tools = tools(obj.get("tools"));
    return new InferenceRequest(
        Endpoint.CHAT,
        model,
        stream,
        maxTokens,
        null,
        null,
        TemplateInputs.messages(messages),
        TemplateInputs.tools(tools),
        templateKwargs(obj),
        obj,
        null,
        openAiSessionKey(obj),
        null,
        null);
  }

  /** {@code chat_template_kwargs} as a map (empty when absent). */
  static Map<String, Object> templateKwargs(ObjectNode obj) {
    JsonNode k = obj.get("chat_template_kwargs");
    if (k == null || k.isNull()) {
      return Map.of();
    }
    if (!k.isObject()) {
      throw fail(
          "'chat_template_kwargs' must be an object.", "chat_template_kwargs", "invalid_type");
    }
    return toMap(k);
  }

  /**
   * The session key of an OpenAI request: {@code prompt_cache_key} (OpenAI's own hint for keeping
   * requests that share a prefix together), else {@code user}; null when neither is a non-empty
   * string.
   */
  static String openAiSessionKey(ObjectNode obj) {
    for (String field : List.of("prompt_cache_key", "user")) {
      JsonNode v = obj.get(field);
      if (v != null && v.isTextual() && !v.asText().isEmpty()) {
        return v.asText();
      }
    }
    return null;
  }

  private List<Map<String, Object>> messages(JsonNode messages, String param) {
    if (messages == null || messages.isNull()) {
      throw fail("'" + param + "' is required.", param, "missing_required_parameter");
    }
    if (!messages.isArray()) {
      throw fail("'" + param + "' must be an array.", param, "invalid_type");
    }
    if (messages.isEmpty()) {
      throw fail("'" + param + "' must not be empty.", param, "empty_prompt");
    }
    for (int i = 0; i < messages.size(); i++) {
      JsonNode m = messages.get(i);
      String where = param + "[" + i + "]";
      if (!m.isObject()) {
        throw fail("'" + where + "' must be an object.", where, "invalid_type");
      }
      JsonNode role = m.get("role");
      if (role == null || !role.isTextual() || !ROLES.contains(role.asText())) {
        throw fail(
            "'" + where + ".role' must be one of " + ROLES + ".", where + ".role", "invalid_value");
      }
      JsonNode content = m.get("content");
      boolean hasToolCalls = m.path("tool_calls").isArray();
      if (content == null || content.isNull()) {
        if (!hasToolCalls) {
          throw fail(
              "'" + where + ".content' is required.",
              where + ".content",
              "missing_required_parameter");
        }
      } else if (content.isArray()) {
        for (int j = 0; j < content.size(); j++) {
          JsonNode part = content.get(j);
          String type = part.path("type").asText("");
          if (!PART_TYPES.contains(type)
              || ("text".equals(type) && !part.path("text").isTextual())) {
            throw fail(
                "'"
                    + where
                    + ".content["
                    + j
                    + "]' must be a content part of type "
                    + PART_TYPES
                    + " (text parts with a string 'text').",
                where + ".content",
                "unsupported_content");
          }
        }
      } else if (!content.isTextual()) {
        throw fail(
            "'" + where + ".content' must be a string or an array of parts.",
            where + ".content",
            "invalid_type");
      }
    }
    return toMaps(messages);
  }

  private List<Map<String, Object>> tools(JsonNode tools) {
    if (tools == null || tools.isNull()) {
      return null;
    }
    if (!tools.isArray()) {
      throw fail("'tools' must be an array.", "tools", "invalid_type");
    }
    for (int i = 0; i < tools.size(); i++) {
      JsonNode t = tools.get(i);
      if (!t.isObject()) {
        throw fail("'tools' entries must be objects.", "tools", "invalid_type");
      }
      if (!t.path("function").path("name").isTextual()) {
        throw fail(
            "'tools[" + i + "].function.name' is required.",
            "tools[" + i + "].function.name",
            "missing_required_parameter");
      }
    }
    return toMaps(tools);
  }

  /** A JSON array of objects as plain Java maps (as templates read them). */
  static List<Map<String, Object>> toMaps(JsonNode array) {
    return JsonValues.maps(array);
  }

  static Map<String, Object> toMap(JsonNode node) {
    return JsonValues.map(node);
  }

  private static String requiredString(ObjectNode obj, String field) {
    JsonNode v = obj.get(field);
    if (v == null || v.isNull()) {
      throw fail("'" + field + "' is required.", field, "missing_required_parameter");
    }
    if (!v.isTextual()) {
      throw fail("'" + field + "' must be a string.", field, "invalid_type");
    }
    if (v.asText().isBlank()) {
      throw fail("'" + field + "' must not be empty.", field, "invalid_value");
    }
    return v.asText();
  }

  private static boolean optionalBoolean(ObjectNode obj, String field) {
    JsonNode v = obj.get(field);
    if (v == null || v.isNull()) {
      return false;
    }
    if (!v.isBoolean()) {
      throw fail("'" + field + "' must be a boolean.", field, "invalid_type");
    }
    return v.asBoolean();
  }

  /** A token limit between 1 and {@link #MAX_TOKENS_CEILING}, or 0 when absent and optional. */
  static int maxTokens(ObjectNode obj, String field, boolean required) {
    JsonNode v = obj.get(field);
    if (v == null || v.isNull()) {
      if (required) {
        throw fail("'" + field + "' is required.", field, "missing_required_parameter");
      }
      return 0;
    }
    if (!v.isIntegralNumber()) {
      throw fail("'" + field + "' must be an integer.", field, "invalid_type");
    }
    if (!v.canConvertToLong() || v.asLong() < 1 || v.asLong() > MAX_TOKENS_CEILING) {
      throw fail(
          "'"
              + field
              + "' must be between 1 and "
              + MAX_TOKENS_CEILING
              + ", was "
              + v.asText()
              + ".",
          field,
          "invalid_value");
    }
    return v.asInt();
  }

  private static ApiException fail(String message, String param, String code) {
    return new ApiException(ApiError.invalid(message, param, code));
  }
}

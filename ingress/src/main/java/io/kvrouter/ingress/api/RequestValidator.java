package io.kvrouter.ingress.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks the shape of an inference request body and turns it into an {@link InferenceRequest}, or
 * throws {@link ApiException} with an OpenAI-style error naming the offending field.
 *
 * <p>It checks what the router itself relies on (model, prompt or messages, stream flag, token
 * limits); sampling parameters pass through to the engine untouched and the engine validates them.
 * Anthropic Messages requests are translated to OpenAI chat here (system prompt to a system
 * message, content blocks to text, {@code stop_sequences} to {@code stop}), following Anthropic's
 * published Messages API reference.
 */
public final class RequestValidator {

  /** Hard ceiling on {@code max_tokens}, whatever the model: anything above is absurd. */
  public static final int MAX_TOKENS_CEILING = 1 << 20;

  private static final Set<String> ROLES =
      Set.of("system", "developer", "user", "assistant", "tool");

  private final ObjectMapper mapper;

  public RequestValidator(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  /** Validates a parsed body for {@code endpoint}. */
  public InferenceRequest validate(Endpoint endpoint, JsonNode body) {
    if (body == null || !body.isObject()) {
      throw fail("The request body must be a JSON object.", null, "invalid_type");
    }
    ObjectNode obj = (ObjectNode) body;
    String model = requiredString(obj, "model");
    boolean stream = optionalBoolean(obj, "stream");
    return switch (endpoint) {
      case COMPLETIONS -> completions(obj, model, stream);
      case CHAT -> chat(obj, model, stream);
      case MESSAGES -> anthropic(obj, model, stream);
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
    Map<String, Object> kwargs = Map.of();
    JsonNode k = obj.get("chat_template_kwargs");
    if (k != null && !k.isNull()) {
      if (!k.isObject()) {
        throw fail(
            "'chat_template_kwargs' must be an object.", "chat_template_kwargs", "invalid_type");
      }
      kwargs = toMap(k);
    }
    return new InferenceRequest(
        Endpoint.CHAT, model, stream, maxTokens, null, null, messages, tools, kwargs, obj);
  }

  private InferenceRequest anthropic(ObjectNode obj, String model, boolean stream) {
    int maxTokens = maxTokens(obj, "max_tokens", true);
    ArrayNode chatMessages = JsonNodeFactory.instance.arrayNode();
    JsonNode system = obj.get("system");
    if (system != null && !system.isNull()) {
      chatMessages
          .addObject()
          .put("role", "system")
          .put("content", anthropicText(system, "system"));
    }
    JsonNode messages = obj.get("messages");
    if (messages == null || !messages.isArray() || messages.isEmpty()) {
      throw fail("'messages' must be a non-empty array.", "messages", "invalid_type");
    }
    for (int i = 0; i < messages.size(); i++) {
      JsonNode m = messages.get(i);
      String where = "messages[" + i + "]";
      if (!m.isObject()) {
        throw fail("'" + where + "' must be an object.", where, "invalid_type");
      }
      JsonNode role = m.get("role");
      if (role == null
          || !role.isTextual()
          || !Set.of("user", "assistant").contains(role.asText())) {
        throw fail(
            "'" + where + ".role' must be 'user' or 'assistant'.",
            where + ".role",
            "invalid_value");
      }
      JsonNode content = m.get("content");
      if (content == null || content.isNull()) {
        throw fail(
            "'" + where + ".content' is required.",
            where + ".content",
            "missing_required_parameter");
      }
      chatMessages
          .addObject()
          .put("role", role.asText())
          .put("content", anthropicText(content, where + ".content"));
    }
    ObjectNode chatBody = JsonNodeFactory.instance.objectNode();
    chatBody.put("model", model);
    chatBody.set("messages", chatMessages);
    chatBody.put("max_tokens", maxTokens);
    chatBody.put("stream", stream);
    if (stream) {
      chatBody.putObject("stream_options").put("include_usage", true);
    }
    for (String passthrough : List.of("temperature", "top_p", "top_k")) {
      if (obj.has(passthrough)) {
        chatBody.set(passthrough, obj.get(passthrough));
      }
    }
    if (obj.has("stop_sequences")) {
      chatBody.set("stop", obj.get("stop_sequences"));
    }
    return new InferenceRequest(
        Endpoint.MESSAGES,
        model,
        stream,
        maxTokens,
        null,
        null,
        messages(chatMessages, "messages"),
        null,
        Map.of(),
        chatBody);
  }

  private String anthropicText(JsonNode content, String where) {
    if (content.isTextual()) {
      return content.asText();
    }
    if (content.isArray()) {
      StringBuilder text = new StringBuilder();
      for (JsonNode block : content) {
        if (!block.isObject()
            || !"text".equals(block.path("type").asText())
            || !block.path("text").isTextual()) {
          throw fail(
              "'" + where + "' supports text blocks only ({\"type\":\"text\",\"text\":...}).",
              where,
              "unsupported_content");
        }
        text.append(block.get("text").asText());
      }
      return text.toString();
    }
    throw fail(
        "'" + where + "' must be a string or an array of text blocks.", where, "invalid_type");
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
    List<Map<String, Object>> result = new ArrayList<>(messages.size());
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
        for (JsonNode part : content) {
          if (!"text".equals(part.path("type").asText()) || !part.path("text").isTextual()) {
            throw fail(
                "'" + where + ".content' supports text parts only.",
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
      result.add(toMap(m));
    }
    return List.copyOf(result);
  }

  private List<Map<String, Object>> tools(JsonNode tools) {
    if (tools == null || tools.isNull()) {
      return null;
    }
    if (!tools.isArray()) {
      throw fail("'tools' must be an array.", "tools", "invalid_type");
    }
    List<Map<String, Object>> result = new ArrayList<>();
    for (JsonNode t : tools) {
      if (!t.isObject()) {
        throw fail("'tools' entries must be objects.", "tools", "invalid_type");
      }
      result.add(toMap(t));
    }
    return List.copyOf(result);
  }

  @SuppressWarnings("unchecked")
  private Map<String, Object> toMap(JsonNode node) {
    return mapper.convertValue(node, Map.class);
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

  private static int maxTokens(ObjectNode obj, String field, boolean required) {
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

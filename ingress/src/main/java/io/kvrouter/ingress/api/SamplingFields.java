package io.kvrouter.ingress.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The types of the sampling and generation fields the router forwards to the engine without using
 * them: a field of the wrong type ({@code "temperature": "hot"}) is answered 400 here, naming the
 * field, rather than sent to a replica after a reservation was made for it.
 *
 * <p>The fields and their types are vLLM's request models ({@code CompletionRequest}, {@code
 * ChatCompletionRequest} and {@code ResponsesRequest} in {@code
 * vllm/entrypoints/openai/protocol.py}, vLLM 0.10). Their validation is pydantic's lax mode, which
 * also accepts a number written as a string, an integer written as a float without a fraction and a
 * boolean written as 0, 1 or a word such as {@code "true"}; this check accepts the same, so nothing
 * vLLM takes is refused. Ranges (a negative temperature, {@code top_p} above 1) are left to the
 * engine, whose 400 reaches the client unchanged. {@code null} is always allowed. Anthropic's
 * fields are checked by {@link AnthropicRequests}.
 */
final class SamplingFields {

  /** The JSON a field takes. */
  enum Kind {
    NUMBER("a number"),
    INTEGER("an integer"),
    BOOLEAN("a boolean"),
    STRING("a string"),
    STRING_OR_STRINGS("a string or an array of strings"),
    INTEGERS("an array of integers"),
    STRINGS("an array of strings"),
    OBJECT("an object"),
    NUMBER_MAP("an object of numbers");

    final String noun;

    Kind(String noun) {
      this.noun = noun;
    }
  }

  /** Fields of both OpenAI generation endpoints (completions and chat). */
  private static final Map<String, Kind> OPENAI =
      Map.ofEntries(
          Map.entry("temperature", Kind.NUMBER),
          Map.entry("top_p", Kind.NUMBER),
          Map.entry("min_p", Kind.NUMBER),
          Map.entry("frequency_penalty", Kind.NUMBER),
          Map.entry("presence_penalty", Kind.NUMBER),
          Map.entry("repetition_penalty", Kind.NUMBER),
          Map.entry("length_penalty", Kind.NUMBER),
          Map.entry("n", Kind.INTEGER),
          Map.entry("best_of", Kind.INTEGER),
          Map.entry("seed", Kind.INTEGER),
          Map.entry("top_k", Kind.INTEGER),
          Map.entry("min_tokens", Kind.INTEGER),
          Map.entry("prompt_logprobs", Kind.INTEGER),
          Map.entry("truncate_prompt_tokens", Kind.INTEGER),
          Map.entry("priority", Kind.INTEGER),
          Map.entry("ignore_eos", Kind.BOOLEAN),
          Map.entry("use_beam_search", Kind.BOOLEAN),
          Map.entry("skip_special_tokens", Kind.BOOLEAN),
          Map.entry("spaces_between_special_tokens", Kind.BOOLEAN),
          Map.entry("include_stop_str_in_output", Kind.BOOLEAN),
          Map.entry("add_special_tokens", Kind.BOOLEAN),
          Map.entry("stop", Kind.STRING_OR_STRINGS),
          Map.entry("stop_token_ids", Kind.INTEGERS),
          Map.entry("allowed_token_ids", Kind.INTEGERS),
          Map.entry("bad_words", Kind.STRINGS),
          Map.entry("logit_bias", Kind.NUMBER_MAP),
          Map.entry("stream_options", Kind.OBJECT),
          Map.entry("response_format", Kind.OBJECT),
          Map.entry("user", Kind.STRING),
          Map.entry("cache_salt", Kind.STRING));

  private static final Map<String, Kind> COMPLETIONS_ONLY =
      Map.of(
          "logprobs", Kind.INTEGER,
          "echo", Kind.BOOLEAN,
          "suffix", Kind.STRING);

  private static final Map<String, Kind> CHAT_ONLY =
      Map.of(
          "logprobs", Kind.BOOLEAN,
          "top_logprobs", Kind.INTEGER,
          "parallel_tool_calls", Kind.BOOLEAN,
          "echo", Kind.BOOLEAN,
          "add_generation_prompt", Kind.BOOLEAN,
          "continue_final_message", Kind.BOOLEAN);

  private static final Map<String, Kind> RESPONSES =
      Map.of(
          "temperature", Kind.NUMBER,
          "top_p", Kind.NUMBER,
          "top_logprobs", Kind.INTEGER,
          "max_tool_calls", Kind.INTEGER,
          "parallel_tool_calls", Kind.BOOLEAN,
          "store", Kind.BOOLEAN,
          "background", Kind.BOOLEAN,
          "user", Kind.STRING,
          "metadata", Kind.OBJECT);

  /** Pydantic's lax words for booleans. */
  private static final Set<String> BOOLEAN_WORDS =
      Set.of("0", "1", "true", "false", "t", "f", "yes", "no", "y", "n", "on", "off");

  private SamplingFields() {}

  /** Checks the forwarded fields of a body for {@code endpoint}; Anthropic's are not looked at. */
  static void check(Endpoint endpoint, ObjectNode body) {
    switch (endpoint) {
      case COMPLETIONS -> {
        check(body, OPENAI);
        check(body, COMPLETIONS_ONLY);
      }
      case CHAT -> {
        check(body, OPENAI);
        check(body, CHAT_ONLY);
      }
      case RESPONSES -> check(body, RESPONSES);
      case MESSAGES, COUNT_TOKENS -> {}
    }
  }

  private static void check(ObjectNode body, Map<String, Kind> fields) {
    for (Map.Entry<String, Kind> f : fields.entrySet()) {
      JsonNode v = body.get(f.getKey());
      if (v != null && !v.isNull() && !accepts(f.getValue(), v)) {
        throw new ApiException(
            ApiError.invalid(
                "'" + f.getKey() + "' must be " + f.getValue().noun + ".",
                f.getKey(),
                "invalid_type"));
      }
    }
  }

  static boolean accepts(Kind kind, JsonNode v) {
    return switch (kind) {
      case NUMBER -> number(v);
      case INTEGER -> integer(v);
      case BOOLEAN -> bool(v);
      case STRING -> v.isTextual();
      case STRING_OR_STRINGS -> v.isTextual() || all(v, Kind.STRING);
      case INTEGERS -> all(v, Kind.INTEGER);
      case STRINGS -> all(v, Kind.STRING);
      case OBJECT -> v.isObject();
      case NUMBER_MAP -> v.isObject() && all(v, Kind.NUMBER);
    };
  }

  private static boolean all(JsonNode container, Kind kind) {
    if (!container.isContainerNode()) {
      return false;
    }
    for (JsonNode e : container) {
      if (!accepts(kind, e)) {
        return false;
      }
    }
    return true;
  }

  private static boolean number(JsonNode v) {
    if (v.isNumber()) {
      return true;
    }
    if (!v.isTextual()) {
      return false;
    }
    try {
      Double.parseDouble(v.asText().strip());
      return true;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  private static boolean integer(JsonNode v) {
    if (v.isIntegralNumber()) {
      return true;
    }
    if (v.isFloatingPointNumber()) {
      double d = v.doubleValue();
      return Double.isFinite(d) && d == Math.rint(d);
    }
    if (!v.isTextual()) {
      return false;
    }
    try {
      new java.math.BigInteger(v.asText().strip());
      return true;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  private static boolean bool(JsonNode v) {
    if (v.isBoolean()) {
      return true;
    }
    if (v.isIntegralNumber()) {
      return v.canConvertToLong() && (v.asLong() == 0 || v.asLong() == 1);
    }
    return v.isTextual() && BOOLEAN_WORDS.contains(v.asText().strip().toLowerCase(Locale.ROOT));
  }
}

package io.kvrouter.ingress.proxy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.ingress.api.Endpoint;
import io.kvrouter.ingress.api.InferenceRequest;
import java.util.Arrays;
import java.util.Iterator;

/**
 * What another engine is sent to continue an answer its first engine left unfinished, and which
 * answers cannot be continued at all.
 *
 * <p>Completions: the prompt followed by the generated tokens, as token ids where the engine takes
 * them (else the prompt text followed by the generated text). Chat: the messages followed by the
 * generated text as a partial assistant message, with {@code continue_final_message: true} and
 * {@code add_generation_prompt: false} (vLLM's {@code ChatCompletionRequest} in {@code
 * vllm/entrypoints/openai/protocol.py}: the final message is left open and the model continues it),
 * so that the engine renders the prompt with its own template and the answer's chunks keep the chat
 * shape. Both: {@code max_tokens} (and {@code max_completion_tokens}, {@code min_tokens}) less the
 * tokens already generated, everything else (stop conditions, sampling) as the client sent it,
 * {@code echo} off (the client has the prompt already).
 *
 * <p>Refused: structured output ({@code response_format} json_object or json_schema, vLLM's {@code
 * guided_*} and {@code structured_outputs}), whose grammar state another engine cannot rebuild from
 * text cut inside a value; tool calls ({@code tool_choice} required or naming a function, or a call
 * already streamed), which the engine's tool parser must see from their start; several choices
 * ({@code n}, {@code best_of} above 1).
 */
final class Continuation {

  private Continuation() {}

  /** Why a request's stream cannot move to another engine whatever it said, or null. */
  static Refusal refusal(InferenceRequest request) {
    ObjectNode body = request.engineBody();
    if (body == null) {
      return Refusal.UNSUPPORTED;
    }
    String format = body.path("response_format").path("type").asText("text");
    if (!format.equals("text") || body.has("structured_outputs")) {
      return Refusal.STRUCTURED;
    }
    for (Iterator<String> names = body.fieldNames(); names.hasNext(); ) {
      if (names.next().startsWith("guided_")) {
        return Refusal.STRUCTURED;
      }
    }
    JsonNode choice = body.path("tool_choice");
    if (body.path("tools").size() > 0
        && (choice.isObject() || choice.asText("auto").equals("required"))) {
      return Refusal.TOOL_CALL;
    }
    if (body.path("n").asInt(1) > 1 || body.path("best_of").asInt(1) > 1) {
      return Refusal.UNSUPPORTED;
    }
    return null;
  }

  /** Why an answer cannot move on, as the migration counter's {@code outcome}. */
  enum Refusal {
    TOOL_CALL("refused_tool_call"),
    STRUCTURED("refused_structured"),
    UNSUPPORTED("refused_unsupported");

    final String outcome;

    Refusal(String outcome) {
      this.outcome = outcome;
    }
  }

  /**
   * The body that continues {@code request} (prompt {@code promptIds}) after {@code generatedText},
   * which the model's tokenizer encodes as {@code generatedIds}; null when its {@code max_tokens}
   * is used up.
   *
   * @param tokenIds whether the engine takes a completions prompt as token ids
   */
  static ObjectNode body(
      InferenceRequest request,
      int[] promptIds,
      String generatedText,
      int[] generatedIds,
      boolean tokenIds) {
    int used = generatedIds.length;
    ObjectNode body = request.engineBody().deepCopy();
    for (String field : new String[] {"max_tokens", "max_completion_tokens"}) {
      if (body.path(field).isNumber()) {
        int left = body.get(field).asInt() - used;
        if (left < 1) {
          return null;
        }
        body.put(field, left);
      }
    }
    if (body.path("min_tokens").isNumber()) {
      body.put("min_tokens", Math.max(0, body.get("min_tokens").asInt() - used));
    }
    if (request.endpoint() == Endpoint.COMPLETIONS) {
      body.remove("echo");
      if (tokenIds || request.promptText() == null) {
        ArrayNode ids = body.putArray("prompt");
        for (int id : routed(promptIds, generatedIds)) {
          ids.add(id);
        }
      } else {
        body.put("prompt", request.promptText() + generatedText);
      }
      return body;
    }
    ArrayNode messages = (ArrayNode) body.get("messages");
    JsonNode last = messages.size() == 0 ? null : messages.get(messages.size() - 1);
    if (body.path("continue_final_message").asBoolean(false)
        && last instanceof ObjectNode open
        && last.path("content").isTextual()) {
      // The client's own partial answer, continued: the new text joins it.
      open.put("content", last.get("content").asText() + generatedText);
    } else {
      messages.addObject().put("role", "assistant").put("content", generatedText);
    }
    body.put("add_generation_prompt", false);
    body.put("continue_final_message", true);
    return body;
  }

  /** The prompt as the router sees the continued request: the prompt, then the generated ids. */
  static int[] routed(int[] promptIds, int[] generatedIds) {
    int[] all = Arrays.copyOf(promptIds, promptIds.length + generatedIds.length);
    System.arraycopy(generatedIds, 0, all, promptIds.length, generatedIds.length);
    return all;
  }
}

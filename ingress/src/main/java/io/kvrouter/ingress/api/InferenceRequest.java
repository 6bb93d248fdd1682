package io.kvrouter.ingress.api;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;

/**
 * A validated inference request, ready to tokenize, route and forward.
 *
 * <p>Exactly one of {@code promptText}, {@code promptTokenIds} and {@code messages} is set:
 * completions carry text or token ids, chat and Anthropic messages carry messages (Anthropic's
 * already translated to OpenAI chat form). {@code engineBody} is the JSON to forward to an
 * OpenAI-compatible engine; the proxy may still replace a text prompt by token ids. The array is
 * not mutated after construction.
 *
 * @param maxTokens requested output tokens, or 0 when the client left it to the engine
 */
public record InferenceRequest(
    Endpoint endpoint,
    String model,
    boolean stream,
    int maxTokens,
    String promptText,
    int[] promptTokenIds,
    List<Map<String, Object>> messages,
    List<Map<String, Object>> tools,
    Map<String, Object> templateKwargs,
    ObjectNode engineBody) {

  /** True when the prompt is chat messages (chat completions or Anthropic messages). */
  public boolean isChat() {
    return messages != null;
  }
}

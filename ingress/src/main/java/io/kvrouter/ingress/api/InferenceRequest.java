package io.kvrouter.ingress.api;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;

/**
 * A validated inference request, ready to tokenize, route and forward.
 *
 * <p>Exactly one of {@code promptText}, {@code promptTokenIds} and {@code messages} is set:
 * completions carry text or token ids, chat, Anthropic messages and Responses carry messages
 * (Anthropic's and Responses' already translated to OpenAI chat form, and with tools and tool calls
 * as the engine hands them to its chat template). {@code engineBody} is the JSON to forward to an
 * OpenAI-compatible engine; the proxy may still replace a text prompt by token ids. {@code
 * nativeBody} is the request as the client sent it, for engines that speak its protocol themselves.
 * The arrays are not mutated after construction.
 *
 * @param maxTokens requested output tokens, or 0 when the client left it to the engine
 * @param nativeBody the client's body for an engine serving the endpoint itself, or null
 * @param sessionKey what the client says identifies its conversation or user (Anthropic {@code
 *     metadata.user_id}, OpenAI {@code prompt_cache_key} or {@code user}), for routing affinity;
 *     null when it says nothing
 * @param pinnedReplica the replica that must serve the request because it holds its state (a
 *     Responses {@code previous_response_id}), or null
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
    ObjectNode engineBody,
    ObjectNode nativeBody,
    String sessionKey,
    String pinnedReplica) {

  /** A request with no native body, session key or pinned replica. */
  public InferenceRequest(
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
    this(
        endpoint,
        model,
        stream,
        maxTokens,
        promptText,
        promptTokenIds,
        messages,
        tools,
        templateKwargs,
        engineBody,
        null,
        null,
        null);
  }

  /** True when the prompt is chat messages (chat completions, Anthropic messages, Responses). */
  public boolean isChat() {
    return messages != null;
  }
}

package io.kvrouter.ingress.api;

import com.fasterxml.jackson.databind.JsonNode;
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
 * @param sent the client's body as it came, with the tree it parsed to ({@link #withSent}): a body
 *     forwarded as that very tree is sent as those bytes, not serialised again; null when unknown
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
    String pinnedReplica,
    Sent sent) {

  /**
   * A request body's bytes and the JSON tree they parsed to (never modified afterwards), so that
   * whoever forwards that tree can send the bytes instead: a 32k-token chat is 130 KB of JSON,
   * whose serialisation took about a ninth of the ingress's own steps on such a turn ({@code
   * LongTurnSteps}).
   */
  public record Sent(JsonNode tree, byte[] bytes) {}

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
        null,
        null);
  }

  /** The same request with another session key (e.g. from the session header). */
  public InferenceRequest withSessionKey(String key) {
    return with(key, sent);
  }

  /** The same request, knowing that {@code bytes} is the body that parsed to {@code tree}. */
  public InferenceRequest withSent(JsonNode tree, byte[] bytes) {
    return with(sessionKey, new Sent(tree, bytes));
  }

  private InferenceRequest with(String key, Sent body) {
    return new InferenceRequest(
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
        nativeBody,
        key,
        pinnedReplica,
        body);
  }

  /**
   * The JSON bytes of {@code node}, one of this request's bodies: the client's own bytes when it is
   * the very tree they parsed to, else {@code serialise}'s.
   */
  public byte[] bytesOf(JsonNode node, java.util.function.Function<JsonNode, byte[]> serialise) {
    return sent != null && sent.tree() == node ? sent.bytes() : serialise.apply(node);
  }

  /** True when the prompt is chat messages (chat completions, Anthropic messages, Responses). */
  public boolean isChat() {
    return messages != null;
  }
}

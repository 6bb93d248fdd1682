package io.kvrouter.ingress.metrics;

/** What the proxy reports as it goes, for metrics and the dashboard. All methods are cheap. */
public interface ProxyListener {

  /** An attempt is sent to {@code replicaId}. */
  default void sent(String model, String replicaId) {}

  /** An attempt at {@code replicaId} failed before the first byte and the next one is tried. */
  default void retried(String model, String replicaId, String reason) {}

  /**
   * A response (or its stream) finished.
   *
   * @param reportedCachedTokens the engine's {@code usage.prompt_tokens_details.cached_tokens}, or
   *     -1 when the response did not say
   */
  default void answered(
      String model,
      String replicaId,
      int promptTokens,
      int predictedCachedTokens,
      int reportedCachedTokens) {}

  /**
   * A request's answer began on the replica it was placed on, its prompt prefilled by {@code path}:
   * {@code direct}, {@code prefill_skipped}, {@code prefill_decode} or {@code prefill_fallback}
   * (once per request, for the attempt that answered).
   */
  default void answering(String model, String path) {}

  /**
   * A stream cut by its engine after its first byte: {@code migrated} to another replica, or why
   * not ({@code refused_tool_call}, {@code refused_structured}, {@code refused_unsupported}, {@code
   * limit}, {@code failed}).
   */
  default void migration(String model, String outcome) {}

  /** No listener. */
  ProxyListener NONE = new ProxyListener() {};
}

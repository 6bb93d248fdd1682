package io.kvrouter.agent.sim;

/**
 * One generation request submitted to a {@link SimEngineCore}.
 *
 * <p>The prompt array is never mutated after the record is built.
 *
 * @param requestId unique among the core's live requests
 * @param promptTokens prompt token ids (non-negative), at least one
 * @param maxTokens tokens to generate, at least one (the sim never stops early: no EOS)
 * @param loraName LoRA adapter name (enters every block hash), or null
 * @param cacheSalt vLLM's {@code cache_salt} (enters the first block hash only), or null
 */
public record SimRequest(
    String requestId, int[] promptTokens, int maxTokens, String loraName, String cacheSalt) {

  public SimRequest {
    java.util.Objects.requireNonNull(requestId, "requestId");
    if (promptTokens == null || promptTokens.length == 0) {
      throw new IllegalArgumentException("prompt must hold at least one token");
    }
    if (maxTokens < 1) {
      throw new IllegalArgumentException("maxTokens must be at least 1, was " + maxTokens);
    }
  }

  /** A request with no LoRA and no salt. */
  public static SimRequest of(String requestId, int[] promptTokens, int maxTokens) {
    return new SimRequest(requestId, promptTokens, maxTokens, null, null);
  }
}

package io.kvrouter.sim;

/**
 * One token a request produced in one pass of a {@link SimEngineCore}.
 *
 * @param requestId the request
 * @param tokenId the generated (synthetic) token id
 * @param index 0 for the first token, then 1, 2, ...
 * @param finished true on the request's last token (its blocks are released)
 * @param promptTokens the request's prompt length
 * @param cachedPromptTokens prompt tokens served from the prefix cache at admission (vLLM's {@code
 *     usage.prompt_tokens_details.cached_tokens})
 * @param timeMicros when the token is ready: the end of the pass (engine clock)
 * @param arrivalMicros when the request was submitted (so TTFT = timeMicros − arrivalMicros on
 *     index 0)
 */
public record Emission(
    String requestId,
    int tokenId,
    int index,
    boolean finished,
    int promptTokens,
    int cachedPromptTokens,
    long timeMicros,
    long arrivalMicros) {

  /** True on the first token. */
  public boolean first() {
    return index == 0;
  }
}

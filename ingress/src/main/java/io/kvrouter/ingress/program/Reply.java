package io.kvrouter.ingress.program;

import com.fasterxml.jackson.databind.node.ArrayNode;

/**
 * A turn's answer as the client received it.
 *
 * @param appended what the client appends to its history to continue (in its protocol: one OpenAI
 *     assistant message, one Anthropic assistant message, or the Responses output items); not
 *     mutated after construction
 * @param toolCall whether it ends in a tool call (OpenAI {@code finish_reason: tool_calls},
 *     Anthropic {@code stop_reason: tool_use}, a Responses {@code function_call} output item)
 * @param promptTokens the prompt tokens the engine reported, or -1
 * @param cachedTokens the prompt tokens it found cached, or -1
 * @param outputTokens the tokens it generated, or -1
 */
public record Reply(
    ArrayNode appended, boolean toolCall, int promptTokens, int cachedTokens, int outputTokens) {

  /**
   * The tokens the engine computed for the turn: its uncached prompt tokens and its output ({@code
   * fallback} when it reported no usage).
   */
  public long service(long fallback) {
    if (promptTokens < 0) {
      return fallback;
    }
    return promptTokens - Math.max(0, cachedTokens) + Math.max(0, outputTokens);
  }

  /** Prompt tokens that were not found cached, or -1 when the engine did not say. */
  public int missingTokens() {
    return promptTokens < 0 || cachedTokens < 0 ? -1 : promptTokens - cachedTokens;
  }
}

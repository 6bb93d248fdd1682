package io.kvrouter.loadtest.bench;

/**
 * One request of a benchmark run, as a {@link BenchRequestSource} yields it.
 *
 * @param offsetNanos intended send time, nanoseconds after the start of the run (open loop: the
 *     runner sends at this time whether or not earlier requests have finished)
 * @param model model name, or {@code null} to use the run's default model
 * @param prompt the prompt
 * @param maxTokens {@code max_tokens} to request (at least 1)
 * @param group shared-prefix group, tenant or chat session ({@code ""} if none), for reports
 */
public record BenchRequest(
    long offsetNanos, String model, BenchPrompt prompt, int maxTokens, String group) {

  public BenchRequest {
    if (offsetNanos < 0) {
      throw new IllegalArgumentException("offsetNanos must be >= 0, got " + offsetNanos);
    }
    if (prompt == null) {
      throw new IllegalArgumentException("prompt is required");
    }
    if (maxTokens < 1) {
      throw new IllegalArgumentException("maxTokens must be >= 1, got " + maxTokens);
    }
    if (group == null) {
      group = "";
    }
  }
}

package io.kvrouter.loadtest.workload;

/**
 * One request of a {@link Workload}.
 *
 * <p>{@code traceBlockIds} holds the trace's chained 512-token block ids ({@code hash_ids}) for
 * requests read from a Mooncake trace, and is empty for generated workloads; the array is never
 * mutated after construction and callers must not mutate it either (records compare arrays by
 * reference). The prompt's token ids are expanded lazily: {@link #promptTokenIds()} allocates a new
 * array on every call, so a replayer should expand once per request and drop the array after use.
 *
 * @param index position in the workload, 0-based, in arrival order
 * @param arrivalMicros arrival time in microseconds from the start of the workload
 * @param session group, tenant or chat session the request belongs to ({@code ""} if none is known)
 * @param turn turn number within a chat session (0-based), 0 for single-turn workloads
 * @param prompt the prompt, expanded on demand
 * @param outputLength tokens to generate
 * @param traceBlockIds chained trace block ids, possibly empty
 */
public record WorkloadRequest(
    int index,
    long arrivalMicros,
    String session,
    int turn,
    PromptTokens prompt,
    int outputLength,
    long[] traceBlockIds) {

  private static final long[] NO_IDS = new long[0];

  public WorkloadRequest {
    if (index < 0 || arrivalMicros < 0 || turn < 0 || outputLength < 0) {
      throw new IllegalArgumentException(
          "negative index, arrival, turn or output length: index="
              + index
              + " arrivalMicros="
              + arrivalMicros
              + " turn="
              + turn
              + " outputLength="
              + outputLength);
    }
    if (session == null || prompt == null) {
      throw new IllegalArgumentException("session and prompt are required");
    }
    if (traceBlockIds == null) {
      traceBlockIds = NO_IDS;
    }
  }

  /** Prompt length in tokens. */
  public int inputLength() {
    return prompt.length();
  }

  /** The prompt's token ids, expanded into a new array (O(inputLength) time and memory). */
  public int[] promptTokenIds() {
    return prompt.toArray();
  }

  /** Arrival time in milliseconds (truncated). */
  public long arrivalMillis() {
    return arrivalMicros / 1000;
  }

  /** A copy with another index and arrival time. */
  WorkloadRequest withIndexAndArrival(int newIndex, long newArrivalMicros) {
    return new WorkloadRequest(
        newIndex, newArrivalMicros, session, turn, prompt, outputLength, traceBlockIds);
  }

  @Override
  public String toString() {
    return "WorkloadRequest["
        + index
        + " @"
        + arrivalMicros
        + "us session="
        + session
        + " turn="
        + turn
        + " in="
        + inputLength()
        + " out="
        + outputLength
        + " blocks="
        + traceBlockIds.length
        + "]";
  }
}

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
 * <p>{@code answered} is the prompt followed by the {@code outputLength} tokens the engine will
 * generate, when the workload knows them (a generated chat whose next turn repeats the answer), and
 * null otherwise (a trace records no answers). A lab engine registers the full blocks of those
 * generated tokens as cached, as vLLM and SGLang do.
 *
 * @param index position in the workload, 0-based, in arrival order
 * @param arrivalMicros arrival time in microseconds from the start of the workload
 * @param session group, tenant or chat session the request belongs to ({@code ""} if none is known)
 * @param turn turn number within a chat session (0-based), 0 for single-turn workloads
 * @param prompt the prompt, expanded on demand
 * @param outputLength tokens to generate
 * @param traceBlockIds chained trace block ids, possibly empty
 * @param answered the prompt and then the answer's tokens, or null when unknown
 */
public record WorkloadRequest(
    int index,
    long arrivalMicros,
    String session,
    int turn,
    PromptTokens prompt,
    int outputLength,
    long[] traceBlockIds,
    PromptTokens answered) {

  private static final long[] NO_IDS = new long[0];

  /** A request whose answer's tokens are unknown. */
  public WorkloadRequest(
      int index,
      long arrivalMicros,
      String session,
      int turn,
      PromptTokens prompt,
      int outputLength,
      long[] traceBlockIds) {
    this(index, arrivalMicros, session, turn, prompt, outputLength, traceBlockIds, null);
  }

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
    if (answered != null && answered.length() != prompt.length() + outputLength) {
      throw new IllegalArgumentException(
          "answered holds "
              + answered.length()
              + " tokens, not the prompt's "
              + prompt.length()
              + " and the answer's "
              + outputLength);
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
        newIndex, newArrivalMicros, session, turn, prompt, outputLength, traceBlockIds, answered);
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

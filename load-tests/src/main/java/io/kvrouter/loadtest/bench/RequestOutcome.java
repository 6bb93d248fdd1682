package io.kvrouter.loadtest.bench;

/**
 * What happened to one request. Times are nanoseconds from the start of the run.
 *
 * <p>Latencies come in two forms. <em>Corrected</em> ones are measured from the intended send time,
 * so a request the client sent late (the scheduler or the client fell behind) is charged for the
 * delay: this is the correction for coordinated omission in an open-loop generator (Gil Tene, "How
 * NOT to Measure Latency", and the HdrHistogram documentation). <em>Uncorrected</em> ones are
 * measured from the moment the request was handed to the HTTP client.
 *
 * <p>{@code chunkNanos} holds the arrival time of each content chunk (a chunk with non-empty text);
 * it is never mutated after construction. An SSE chunk may carry several tokens, so inter-token
 * latency here is inter-chunk latency, as every streaming client measures it.
 *
 * @param index position in the run, 0-based (negative for unrecorded warm-up requests)
 * @param target index of the target URL, -1 if the request was dropped
 * @param group the request's group ({@code ""} if none)
 * @param status the outcome
 * @param httpStatus HTTP status, 0 if no response arrived
 * @param error a short error description, {@code null} when OK
 * @param intendedNanos intended send time
 * @param sentNanos actual send time, -1 if never sent
 * @param endNanos time of {@code [DONE]} or of the failure, -1 if never sent
 * @param chunkNanos arrival time of each content chunk
 * @param promptTokens {@code usage.prompt_tokens}, -1 if not reported
 * @param completionTokens {@code usage.completion_tokens}, -1 if not reported
 * @param cachedTokens {@code usage.prompt_tokens_details.cached_tokens}, -1 if not reported
 */
public record RequestOutcome(
    int index,
    int target,
    String group,
    Status status,
    int httpStatus,
    String error,
    long intendedNanos,
    long sentNanos,
    long endNanos,
    long[] chunkNanos,
    int promptTokens,
    int completionTokens,
    int cachedTokens) {

  /** How a request ended. */
  public enum Status {
    /** Streamed to {@code [DONE]}. */
    OK,
    /** The server answered with a status other than 200. */
    HTTP_ERROR,
    /** 200, then an error frame, a malformed chunk, or the stream ended before {@code [DONE]}. */
    STREAM_ERROR,
    /** No response at all: connection refused or reset, or the request could not be encoded. */
    SEND_ERROR,
    /** Not finished within the request timeout. */
    TIMEOUT,
    /** Not sent: the concurrency cap was reached when it was due. */
    DROPPED,
    /** In flight when the run was stopped early; its figures are not used. */
    CANCELLED
  }

  /** A request dropped at the concurrency cap. */
  static RequestOutcome dropped(int index, String group, long intendedNanos) {
    return unsent(index, group, Status.DROPPED, "concurrency cap reached", intendedNanos);
  }

  /** A request whose outcome never came, not even its own timeout (a safety net's verdict). */
  static RequestOutcome neverCompleted(int index) {
    return unsent(index, "", Status.TIMEOUT, "never completed", -1);
  }

  private static RequestOutcome unsent(
      int index, String group, Status status, String error, long intendedNanos) {
    return new RequestOutcome(
        index, -1, group, status, 0, error, intendedNanos, -1, -1, new long[0], -1, -1, -1);
  }

  /** Whether at least one content chunk arrived. */
  public boolean hasFirstChunk() {
    return chunkNanos.length > 0;
  }

  /** Time to first content chunk from the intended send time; requires {@link #hasFirstChunk()}. */
  public long ttftCorrectedNanos() {
    return chunkNanos[0] - intendedNanos;
  }

  /** Time to first content chunk from the actual send time; requires {@link #hasFirstChunk()}. */
  public long ttftUncorrectedNanos() {
    return chunkNanos[0] - sentNanos;
  }

  /** End-to-end latency from the intended send time. */
  public long e2eCorrectedNanos() {
    return endNanos - intendedNanos;
  }

  /** End-to-end latency from the actual send time. */
  public long e2eUncorrectedNanos() {
    return endNanos - sentNanos;
  }

  /** How late the request was sent, relative to its intended time. */
  public long sendLagNanos() {
    return sentNanos - intendedNanos;
  }

  /** Number of inter-chunk gaps: chunks - 1 (0 with fewer than two chunks). */
  public int gapCount() {
    return Math.max(0, chunkNanos.length - 1);
  }

  /** Gap {@code i} between content chunks {@code i} and {@code i + 1}. */
  public long gapNanos(int i) {
    return chunkNanos[i + 1] - chunkNanos[i];
  }
}

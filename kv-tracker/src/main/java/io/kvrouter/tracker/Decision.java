package io.kvrouter.tracker;

import io.kvrouter.protocol.Reserved;
import java.util.List;

/**
 * The outcome of select-and-reserve.
 *
 * @param requestId the request placed
 * @param chosen the replica's target id, or {@code null} when no replica serves the model
 * @param ranked every candidate, best first (the chosen one first); retry down this list
 * @param reserved the reservation this tracker recorded, to broadcast to peers; {@code null} when
 *     nothing was chosen
 * @param busy true when nothing was chosen because every candidate is over its busy threshold, or
 *     because none is predicted to meet the request's TTFT target (only for requests asking for
 *     admission; see {@link #sloMiss()})
 * @param heldMillis how long the tracker held the request before deciding it (the policy's wait for
 *     long prompts among several routers); 0 when decided at once
 */
public record Decision(
    String requestId,
    String chosen,
    List<Candidate> ranked,
    Reserved reserved,
    boolean busy,
    long heldMillis) {

  public Decision {
    ranked = List.copyOf(ranked);
  }

  /** Decided at once. */
  public Decision(
      String requestId, String chosen, List<Candidate> ranked, Reserved reserved, boolean busy) {
    this(requestId, chosen, ranked, reserved, busy, 0);
  }

  /** The same decision, taken after the request was held {@code millis}. */
  public Decision heldFor(long millis) {
    return new Decision(requestId, chosen, ranked, reserved, busy, millis);
  }

  /** A decision that is not a busy refusal. */
  public Decision(String requestId, String chosen, List<Candidate> ranked, Reserved reserved) {
    this(requestId, chosen, ranked, reserved, false);
  }

  /** No replica serves the request's model (or every one is excluded). */
  public static Decision none(String requestId) {
    return new Decision(requestId, null, List.of(), null, false);
  }

  /** Every candidate is over its busy threshold; nothing was reserved. */
  public static Decision busy(String requestId) {
    return new Decision(requestId, null, List.of(), null, true);
  }

  /**
   * No candidate is predicted to meet the request's TTFT target; nothing was reserved. {@code
   * candidates} carry their predictions, so the caller can tell waiting from hopeless.
   */
  public static Decision sloMiss(String requestId, List<Candidate> candidates) {
    return new Decision(requestId, null, candidates, null, true);
  }

  public boolean placed() {
    return chosen != null;
  }

  /** True for a refusal because no candidate meets the TTFT target ({@link #sloMiss}). */
  public boolean sloMiss() {
    return busy && !ranked.isEmpty();
  }

  /**
   * "full", "partial" or "miss" ({@link io.kvrouter.tracker.index.SlidingWindowHit.Kind}) for a
   * full-attention match of {@code fullMatched} blocks of which {@code credited} are reusable.
   */
  public static String hitClass(int fullMatched, int credited) {
    return io.kvrouter.tracker.index.SlidingWindowHit.classify(fullMatched, credited)
        .name()
        .toLowerCase(java.util.Locale.ROOT);
  }

  /**
   * One candidate as the tracker saw it.
   *
   * @param replicaId target id
   * @param matchedBlocks leading prompt blocks it holds in any tier (predicted included) and can
   *     reuse: for a hybrid model, shrunk to where its sliding-window group holds the window
   * @param gpuBlocks of those, confirmed on GPU
   * @param cachedTokens prompt tokens it is predicted to serve from cache
   * @param inFlight its reserved requests at decision time
   * @param predictedTtftMillis its predicted time to first token for the request (NaN when the
   *     request brought no predictor)
   * @param ttftFloorMillis the same prediction were the replica idle: no wait can beat it (NaN
   *     without a predictor)
   * @param hit "full" (the whole full-attention match is reusable), "partial" (a hybrid model's
   *     window group shrank it, possibly to 0) or "miss" (nothing matched)
   */
  public record Candidate(
      String replicaId,
      int matchedBlocks,
      int gpuBlocks,
      int cachedTokens,
      int inFlight,
      double predictedTtftMillis,
      double ttftFloorMillis,
      String hit) {

    public Candidate(
        String replicaId,
        int matchedBlocks,
        int gpuBlocks,
        int cachedTokens,
        int inFlight,
        double predictedTtftMillis,
        double ttftFloorMillis) {
      this(
          replicaId,
          matchedBlocks,
          gpuBlocks,
          cachedTokens,
          inFlight,
          predictedTtftMillis,
          ttftFloorMillis,
          hitClass(matchedBlocks, matchedBlocks));
    }

    /** A candidate without TTFT predictions. */
    public Candidate(
        String replicaId, int matchedBlocks, int gpuBlocks, int cachedTokens, int inFlight) {
      this(replicaId, matchedBlocks, gpuBlocks, cachedTokens, inFlight, Double.NaN, Double.NaN);
    }
  }
}

package io.kvrouter.tracker.policy;

import java.util.Arrays;

/**
 * How far each replica has got through the prefill queued on it, estimated from the view alone. The
 * ledger's prefill load of a replica ({@code LoadView#prefillTokens}) is the whole uncached part of
 * every reservation there whose first token has not arrived, so a 40,000-token prompt weighs 40,000
 * tokens until its last pass, even when its first four passes are done. Taken at face value that
 * overstates the wait behind a long prompt by up to its whole compute, and sends the next turn of a
 * conversation away from the replica that holds it, to recompute the prefix elsewhere.
 *
 * <p>A chunked-prefill engine works through its queued prefill without pause (every pass fills its
 * token budget from the running requests first, then the waiting ones), so the work done since the
 * current backlog began is about {@code rate × elapsed}. Per replica this keeps when the prompt at
 * the head began: when a reservation lands on a replica last seen idle ({@link #reserved}), when
 * one of this router's own prompts there got its first token ({@link #prefilled}), or when the
 * prefill load is seen to fall (a peer's first token: {@link #remaining} takes the moment it saw
 * that, later than it happened, so the estimate errs towards more work left). The work left is
 * {@code max(0, prefill − rate × (now − start))}.
 *
 * <p>Cost: O(1) per call, amortised; the arrays grow with the largest replica index. Not
 * thread-safe: owned by its policy.
 */
final class PrefillProgress {

  /** No start known (a replica not seen yet): its prefill counts as just begun. */
  private static final long UNKNOWN = Long.MIN_VALUE;

  private long[] seen = new long[0];
  private long[] since = new long[0];

  /**
   * Prefill tokens still to compute on {@code replica}, of the {@code prefillTokens} the view holds
   * there now, when the replica computes {@code tokensPerMilli} prompt tokens per millisecond.
   */
  double remaining(int replica, long prefillTokens, long nowMillis, double tokensPerMilli) {
    grow(replica);
    if (prefillTokens <= 0 || prefillTokens < seen[replica] || since[replica] == UNKNOWN) {
      since[replica] = nowMillis;
    }
    seen[replica] = Math.max(0, prefillTokens);
    double done = tokensPerMilli * Math.max(0, nowMillis - since[replica]);
    return Math.max(0, prefillTokens - done);
  }

  /**
   * A reservation of {@code prefillTokens} was placed on {@code replica} at {@code atMillis} (this
   * router's or a peer's): on a replica believed idle its prefill starts then.
   */
  void reserved(int replica, long atMillis) {
    if (replica < 0) {
      return;
    }
    grow(replica);
    if (seen[replica] <= 0) {
      since[replica] = Math.max(since[replica], atMillis);
    }
  }

  /**
   * A first token arrived on {@code replica} at {@code atMillis} (known exactly for this router's
   * own requests): the next queued prompt starts then.
   */
  void prefilled(int replica, long atMillis) {
    if (replica < 0) {
      return;
    }
    grow(replica);
    since[replica] = Math.max(since[replica], atMillis);
  }

  /** The replica left: forget its progress. */
  void forget(int replica) {
    if (replica >= 0 && replica < seen.length) {
      seen[replica] = 0;
      since[replica] = UNKNOWN;
    }
  }

  private void grow(int replica) {
    if (replica >= seen.length) {
      int n = Math.max(replica + 1, 2 * seen.length);
      int was = seen.length;
      seen = Arrays.copyOf(seen, n);
      since = Arrays.copyOf(since, n);
      Arrays.fill(since, was, n, UNKNOWN);
    }
  }
}

package io.kvrouter.tracker.policy;

/**
 * What a policy knows of the request it places: the prompt's block keys, its size and the time. The
 * keys array is not copied and must not be mutated while the query is in use.
 *
 * @param keys the prompt's router block keys ({@code BlockKeys}), at least {@code keyCount}
 * @param keyCount how many of {@code keys} belong to the prompt
 * @param promptTokens prompt length in tokens (≥ {@code keyCount * blockSize})
 * @param blockSize tokens per block
 * @param nowMillis the decision time (tracker clock; virtual time in the lab)
 * @param gated whether an admission gate checks the decision before it stands (strict mode): the
 *     gate serialises decisions on a replica across routers, so the policy need not make concurrent
 *     decisions diverge and should take the least loaded of equal candidates
 * @param opensSession whether the request opens a session: it carries a session key that no replica
 *     is bound to yet, so its later turns will follow it ({@code cost.session-share})
 */
public record RouteQuery(
    long[] keys,
    int keyCount,
    int promptTokens,
    int blockSize,
    long nowMillis,
    boolean gated,
    boolean opensSession) {

  /** A query that opens no session. */
  public RouteQuery(
      long[] keys, int keyCount, int promptTokens, int blockSize, long nowMillis, boolean gated) {
    this(keys, keyCount, promptTokens, blockSize, nowMillis, gated, false);
  }

  /** An ungated query (broadcast mode). */
  public RouteQuery(long[] keys, int keyCount, int promptTokens, int blockSize, long nowMillis) {
    this(keys, keyCount, promptTokens, blockSize, nowMillis, false);
  }

  public RouteQuery {
    if (keyCount < 0 || keyCount > keys.length) {
      throw new IllegalArgumentException("keyCount " + keyCount + " outside keys " + keys.length);
    }
    if (blockSize <= 0 || promptTokens < 0) {
      throw new IllegalArgumentException("blockSize must be > 0 and promptTokens >= 0");
    }
  }

  /** A query over all of {@code keys}. */
  public static RouteQuery of(long[] keys, int promptTokens, int blockSize, long nowMillis) {
    return new RouteQuery(keys, keys.length, promptTokens, blockSize, nowMillis);
  }

  /** Prompt blocks: full blocks, plus one for a trailing partial block. */
  public int promptBlocks() {
    return (promptTokens + blockSize - 1) / blockSize;
  }
}

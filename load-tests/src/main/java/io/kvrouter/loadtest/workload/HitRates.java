package io.kvrouter.loadtest.workload;

/**
 * Prefix-cache hit totals over a run and the two rates derived from them.
 *
 * @param requests requests recorded
 * @param matchedBlocks leading trace blocks already held by the chosen replica, summed
 * @param totalBlocks trace blocks of all prompts
 * @param cachedTokens cached prompt tokens: per request {@code min(matchedBlocks × blockTokens,
 *     inputLength)}
 * @param promptTokens prompt tokens
 */
public record HitRates(
    long requests, long matchedBlocks, long totalBlocks, long cachedTokens, long promptTokens) {

  /**
   * Block-weighted hit rate: matched ÷ total trace blocks (0 if no blocks). The measure of the
   * published figures.
   */
  public double blockHitRate() {
    return totalBlocks == 0 ? 0.0 : (double) matchedBlocks / totalBlocks;
  }

  /** Token-weighted hit rate: cached ÷ prompt tokens (0 if no tokens). */
  public double tokenHitRate() {
    return promptTokens == 0 ? 0.0 : (double) cachedTokens / promptTokens;
  }

  @Override
  public String toString() {
    return String.format(
        java.util.Locale.ROOT,
        "HitRates[%d requests, block %.4f (%d/%d), token %.4f (%d/%d)]",
        requests,
        blockHitRate(),
        matchedBlocks,
        totalBlocks,
        tokenHitRate(),
        cachedTokens,
        promptTokens);
  }
}

package io.kvrouter.sim;

/**
 * How long one scheduler pass of the simulated engine takes. Pluggable so the policy lab can try
 * other engine profiles; the default is {@link MockerTimingModel}.
 */
@FunctionalInterface
public interface TimingModel {

  /**
   * Duration of one pass.
   *
   * @param prefillTokens uncached prompt tokens computed in the pass (cached ones count as done)
   * @param decodeTokens requests that decode one token in the pass
   * @param activeBlocks KV blocks referenced by requests during the pass
   * @param totalBlocks the cache's capacity in blocks
   * @return microseconds, at least 1 when the pass did any work
   */
  long passMicros(int prefillTokens, int decodeTokens, int activeBlocks, int totalBlocks);
}

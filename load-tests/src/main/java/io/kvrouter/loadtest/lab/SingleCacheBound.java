package io.kvrouter.loadtest.lab;

import io.kvrouter.loadtest.workload.PrefixCacheBound;
import io.kvrouter.loadtest.workload.Workload;

/**
 * The hit rates one unlimited cache fed every request reaches: the bounds the lab's policies are
 * measured against.
 *
 * <ul>
 *   <li>{@code tokenRate}: the engines' measure: per request, the leading lab blocks already
 *       cached, at most {@code (promptLength − 1) / blockSize} blocks (vLLM always computes the
 *       last prompt token), times the block size, over prompt tokens;
 *   <li>{@code blockRate}: for traces with block ids, {@link PrefixCacheBound#singleCache}'s
 *       block-weighted rate over trace blocks (the published figure); otherwise the same over lab
 *       blocks.
 * </ul>
 *
 * @param tokenRate cached prompt tokens ÷ prompt tokens
 * @param blockRate cached blocks ÷ blocks
 */
public record SingleCacheBound(double tokenRate, double blockRate) {

  /** Cost: O(total prompt blocks), one set of all distinct keys. */
  public static SingleCacheBound of(Workload workload, PromptKeys keys) {
    int bs = keys.blockKeys().blockSize();
    LongIntMap cached = new LongIntMap(1 << 16);
    long cachedTokens = 0;
    long promptTokens = 0;
    long matchedBlocks = 0;
    long blocks = 0;
    for (int i = 0; i < keys.size(); i++) {
      long[] k = keys.of(i);
      int len = workload.get(i).inputLength() + keys.imageTokens(i);
      int matched = 0;
      while (matched < k.length && cached.containsKey(k[matched])) {
        matched++;
      }
      cachedTokens += (long) Math.min(matched, Math.max(0, (len - 1) / bs)) * bs;
      promptTokens += len;
      matchedBlocks += matched;
      blocks += k.length;
      for (long key : k) {
        cached.put(key, 1);
      }
    }
    double blockRate =
        workload.blockTokens() > 0
            ? PrefixCacheBound.singleCache(workload).blockHitRate()
            : blocks == 0 ? 0 : (double) matchedBlocks / blocks;
    return new SingleCacheBound(
        promptTokens == 0 ? 0 : (double) cachedTokens / promptTokens, blockRate);
  }
}

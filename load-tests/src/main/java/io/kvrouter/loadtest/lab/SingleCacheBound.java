package io.kvrouter.loadtest.lab;

import io.kvrouter.loadtest.workload.PrefixCacheBound;
import io.kvrouter.loadtest.workload.Workload;

/**
 * The hit rates one cache fed every request reaches: the references the lab's policies are measured
 * against.
 *
 * <ul>
 *   <li>{@code tokenRate}: one unlimited cache, the engines' measure: per request, the leading lab
 *       blocks already cached, at most {@code (promptLength − 1) / blockSize} blocks (vLLM always
 *       computes the last prompt token), times the block size, over prompt tokens; a request whose
 *       answer the workload knows leaves its answer's blocks cached too ({@link
 *       PromptKeys#engineOf}), as the engines do;
 *   <li>{@code blockRate}: for traces with block ids, {@link PrefixCacheBound#singleCache}'s
 *       block-weighted rate over trace blocks (the published figure); otherwise the same over lab
 *       blocks;
 *   <li>{@code pooledTokenRate}: the engines' measure over one cache of {@code pooledBlocks} lab
 *       blocks evicting least recently used blocks, prefix tails first ({@link PooledLruCache}), as
 *       the engines do: every replica's capacity pooled, nothing held twice, every request finding
 *       every block any replica kept. A reference for what the capacity holds under the engines'
 *       eviction, not a bound: separate caches evict differently from one pooled cache, and a
 *       policy that keeps each conversation on one replica can hold a little more. Equal to {@code
 *       tokenRate} when unlimited.
 * </ul>
 *
 * @param tokenRate cached prompt tokens ÷ prompt tokens, unlimited
 * @param blockRate cached blocks ÷ blocks, unlimited
 * @param pooledTokenRate cached prompt tokens ÷ prompt tokens in the pooled LRU cache
 * @param pooledBlocks the pooled cache's capacity in lab blocks, 0 for unlimited
 */
public record SingleCacheBound(
    double tokenRate, double blockRate, double pooledTokenRate, long pooledBlocks) {

  /**
   * Cost: O(total prompt blocks), one set of all distinct keys, and when {@code pooledBlocks} is
   * positive an LRU set of at most that many keys (about 50 bytes each).
   *
   * @param pooledBlocks blocks of the pooled cache (replicas × capacity per replica), 0 for
   *     unlimited
   */
  public static SingleCacheBound of(Workload workload, PromptKeys keys, long pooledBlocks) {
    if (pooledBlocks < 0) {
      throw new IllegalArgumentException("pooled blocks must be >= 0, was " + pooledBlocks);
    }
    int bs = keys.blockKeys().blockSize();
    LongIntMap cached = new LongIntMap(1 << 16);
    PooledLruCache pooled = pooledBlocks == 0 ? null : new PooledLruCache(pooledBlocks);
    long cachedTokens = 0;
    long pooledTokens = 0;
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
      int countable = Math.max(0, (len - 1) / bs);
      cachedTokens += (long) Math.min(matched, countable) * bs;
      long[] stored = keys.engineOf(i);
      if (pooled != null) {
        pooledTokens += (long) Math.min(pooled.leadingMatch(k), countable) * bs;
        pooled.admit(stored);
      }
      promptTokens += len;
      matchedBlocks += matched;
      blocks += k.length;
      for (long key : stored) {
        cached.put(key, 1);
      }
    }
    double blockRate =
        workload.blockTokens() > 0
            ? PrefixCacheBound.singleCache(workload).blockHitRate()
            : blocks == 0 ? 0 : (double) matchedBlocks / blocks;
    double tokenRate = promptTokens == 0 ? 0 : (double) cachedTokens / promptTokens;
    return new SingleCacheBound(
        tokenRate,
        blockRate,
        pooled == null || promptTokens == 0 ? tokenRate : (double) pooledTokens / promptTokens,
        pooledBlocks);
  }
}

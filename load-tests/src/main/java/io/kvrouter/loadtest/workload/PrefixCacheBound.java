package io.kvrouter.loadtest.workload;

/**
 * Reference hit rates of a trace workload computed at block level with {@link BlockHitCounter}: one
 * shared unlimited cache (the upper bound any routing can reach with unlimited memory: {@code
 * single_cache_block_hit_rate}, token-weighted {@code single_cache_hit_rate}) and round robin over
 * {@code n} caches.
 *
 * <p>Round robin: request {@code i} in trace order goes to replica {@code i mod n}. With lookup
 * before insertion this reproduces the figures published with the traces (kvcache-ai/Mooncake
 * FAST25-release traces; Dynamo's docs quote the conversation trace's "36.64% cache efficiency"):
 * conversation one cache 0.3664, round robin 4/8/16 0.192/0.136/0.099, synthetic one cache 0.640.
 *
 * <p>Cost: O(total blocks) time, memory of the held ids (~20 MB for the conversation trace).
 */
public final class PrefixCacheBound {

  private PrefixCacheBound() {}

  /** One unlimited cache receiving every request. */
  public static HitRates singleCache(Workload workload) {
    return roundRobin(workload, 1, 0);
  }

  /** Round robin over {@code replicas} unlimited caches. */
  public static HitRates roundRobin(Workload workload, int replicas) {
    return roundRobin(workload, replicas, 0);
  }

  /**
   * One unlimited cache over a workload without trace ids (or ignoring them), counting chained
   * blocks of {@code blockTokens} tokens derived from the prompts ({@link ChainedBlockIds}).
   */
  public static HitRates singleCache(Workload workload, int blockTokens) {
    BlockHitCounter counter = BlockHitCounter.derivingBlockIds(workload, blockTokens, 1, 0);
    for (int i = 0; i < workload.size(); i++) {
      counter.record(i, 0);
    }
    return counter.rates();
  }

  /**
   * Round robin over {@code replicas} caches of {@code capacityBlocksPerReplica} blocks each (0 =
   * unlimited).
   */
  public static HitRates roundRobin(Workload workload, int replicas, int capacityBlocksPerReplica) {
    BlockHitCounter counter = new BlockHitCounter(workload, replicas, capacityBlocksPerReplica);
    for (int i = 0; i < workload.size(); i++) {
      counter.record(i, i % replicas);
    }
    return counter.rates();
  }
}

package io.kvrouter.loadtest.baselines;

/**
 * The peer baselines' parameters, each at the shipped default of the peer it follows (each
 * baseline's class comment names the source and version).
 *
 * @param chwblLoadFactor chwbl: load bound factor (KubeAI's mean load percentage 125)
 * @param chwblPrefixBlocks chwbl: leading prompt blocks that stand for KubeAI's 100-character
 *     prefix (2: about 25 tokens at 4 characters a token, rounded up to 16-token blocks)
 * @param chwblVirtualNodes chwbl: ring points per replica (KubeAI's replication 256)
 * @param sglangBalanceAbs sglang: balance_abs_threshold (64 in SMG; 32 in the old sgl-router)
 * @param sglangBalanceRel sglang: balance_rel_threshold (1.5; 1.0001 in v0.4)
 * @param sglangCacheThreshold sglang: cache_threshold (0.3; 0.5 in v0.4)
 * @param sglangMaxBlocksPerWorker sglang: approximate tree size per worker before LRU eviction
 *     (SMG's max_tree_size 2^26 characters, taken as tokens, in 16-token blocks)
 * @param dynamoOverlapWeight dynamo: overlap_score_weight (1.0)
 * @param dynamoTemperature dynamo: router_temperature (0 = argmin)
 * @param llmdPrefixWeight llm-d: precise prefix scorer weight (2.0)
 * @param llmdKvWeight llm-d: KV-cache utilisation scorer weight (1.0)
 * @param llmdQueueWeight llm-d: queue scorer weight (1.0)
 */
public record BaselineSettings(
    double chwblLoadFactor,
    int chwblPrefixBlocks,
    int chwblVirtualNodes,
    int sglangBalanceAbs,
    double sglangBalanceRel,
    double sglangCacheThreshold,
    int sglangMaxBlocksPerWorker,
    double dynamoOverlapWeight,
    double dynamoTemperature,
    double llmdPrefixWeight,
    double llmdKvWeight,
    double llmdQueueWeight) {

  /** The peers' shipped defaults, as described above. */
  public static final BaselineSettings SHIPPED =
      new BaselineSettings(1.25, 2, 256, 64, 1.5, 0.3, 1 << 22, 1.0, 0.0, 2.0, 1.0, 1.0);
}

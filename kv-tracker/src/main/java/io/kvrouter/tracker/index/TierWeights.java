package io.kvrouter.tracker.index;

/**
 * What a matched block is worth by where the replica holds it, relative to a block on GPU (1.0):
 * reloading a block from host memory or disk costs a transfer, so it saves less prefill than a GPU
 * hit, and a block only predicted (reserved, not yet confirmed by the engine) may not be there.
 * {@link MatchResult#credited} weighs a match with these; a policy turns the result into tokens
 * ({@code credited × blockSize}) wherever it counts cached tokens.
 *
 * @param gpu credit of a block held on GPU (1.0 in every peer)
 * @param predicted credit of a predicted block
 * @param cpu credit of a block held in host memory (the engine's CPU / CPU_PINNED medium)
 * @param disk credit of a block held on disk or external storage
 */
public record TierWeights(double gpu, double predicted, double cpu, double disk) {

  public TierWeights {
    for (double w : new double[] {gpu, predicted, cpu, disk}) {
      if (!(w >= 0 && w <= 1)) {
        throw new IllegalArgumentException("tier weights must lie in [0, 1], were " + this);
      }
    }
  }

  /**
   * Dynamo's tier credits: host memory 0.75, disk 0.25 (ai-dynamo/dynamo KV router, as the policy
   * comparison in the lab cites it); predicted blocks 0.9, kvrouter's own default.
   */
  public static TierWeights dynamo() {
    return new TierWeights(1.0, 0.9, 0.75, 0.25);
  }

  /**
   * llm-d's KV-cache backend weights: {@code gpu} 1.0, {@code cpu} 0.8 (llm-d/llm-d-kv-cache {@code
   * docs/configuration.md}, {@code kvCacheBackendConfigs}, at 0cabba56; {@code
   * DefaultKVCacheBackendConfig} in {@code pkg/kvcache/backend.go} of llm-d-kv-cache-manager at
   * a378f5b3). It names no disk tier, and a medium without a configured weight counts 1.0 ({@code
   * getMaxWeight} in {@code pkg/kvcache/kvblock_scorer.go}: {@code weight := 1.0} unless the medium
   * is in the map), so disk counts 1.0; it has no predicted blocks, so they count 0.
   */
  public static TierWeights llmd() {
    return new TierWeights(1.0, 0.0, 0.8, 1.0);
  }
}

package io.kvrouter.agent;

/**
 * Computes router block keys from token ids: the agent's bridge from the engine's hash space to the
 * router's. The tracker's own function (kv-tracker {@code BlockKeys}) will be swapped in by the
 * lead; this module does not depend on kv-tracker.
 */
@FunctionalInterface
public interface RouterKeyFunction {

  /**
   * Keys of the full blocks of {@code tokenIds}, chained from {@code parentRouterKey}.
   *
   * @param parentRouterKey key of the block before the first one, or {@code BlocksStored.ROOT}
   * @param tokenIds tokens; only full blocks count ({@code tokenIds.length / blockSize} keys)
   * @param blockSize tokens per block
   * @param loraName adapter name (enters every key), or null
   * @return one key per full block, none of them 0 ({@code BlocksStored.ROOT})
   */
  long[] keys(long parentRouterKey, int[] tokenIds, int blockSize, String loraName);
}

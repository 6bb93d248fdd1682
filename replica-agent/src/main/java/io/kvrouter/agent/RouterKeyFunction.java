package io.kvrouter.agent;

import io.kvrouter.protocol.keys.ExtraKeys;

/**
 * Computes router block keys from token ids: the agent's bridge from the engine's hash space to the
 * router's. The agent runs {@link TrackerRouterKeys}, the router's own {@code BlockKeys} from
 * cluster-config's wire protocol; tests may pass simpler functions.
 */
@FunctionalInterface
public interface RouterKeyFunction {

  /**
   * Keys of the full blocks of {@code tokenIds}, chained from {@code parentRouterKey}, each block
   * with its extra key (what {@code ExtraKeys.blockExtra} gives the request that filled it).
   *
   * @param parentRouterKey key of the block before the first one, or {@code BlocksStored.ROOT}
   * @param tokenIds tokens; only full blocks count ({@code tokenIds.length / blockSize} keys)
   * @param blockSize tokens per block
   * @param blockExtras one extra key per full block (0 for none), or null when no block has any
   * @return one key per full block, none of them 0 ({@code BlocksStored.ROOT})
   */
  long[] chain(long parentRouterKey, int[] tokenIds, int blockSize, long[] blockExtras);

  /**
   * {@link #chain} for blocks whose only extra input is a LoRA adapter.
   *
   * @param loraName adapter name (enters every key), or null
   */
  default long[] keys(long parentRouterKey, int[] tokenIds, int blockSize, String loraName) {
    if (loraName == null) {
      return chain(parentRouterKey, tokenIds, blockSize, null);
    }
    long[] extras = new long[tokenIds.length / blockSize];
    java.util.Arrays.fill(extras, ExtraKeys.engineBlockExtra(loraName, null, null, null, 0));
    return chain(parentRouterKey, tokenIds, blockSize, extras);
  }
}

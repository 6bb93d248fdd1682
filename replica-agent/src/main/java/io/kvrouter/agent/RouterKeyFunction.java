package io.kvrouter.agent;

/**
 * Computes router block keys from token ids: the agent's bridge from the engine's hash space to the
 * router's. The agent runs {@link TrackerRouterKeys}, the router's own {@code BlockKeys} from
 * cluster-config's wire protocol; tests may pass simpler functions.
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

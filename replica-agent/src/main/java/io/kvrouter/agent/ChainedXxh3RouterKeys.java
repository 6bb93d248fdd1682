package io.kvrouter.agent;

import net.openhft.hashing.LongHashFunction;

/**
 * The agent's default {@link RouterKeyFunction}: a chained XXH3-64 over full blocks, seeded by
 * model (and LoRA) name, in the spirit of Dynamo's router-side hashing ({@code
 * shared/specs/vllm-kv-events.md} §5): {@code local_i = XXH3(seed, tokens_i as int32 LE)},
 * {@code key_i = XXH3(seed, [key_{i−1}, local_i] as int64 LE)}, with {@code key_{−1}} the parent
 * key (0 at the root) and a 0 result mapped to 1 (0 is {@code BlocksStored.ROOT}).
 *
 * <p>Stateless and thread-safe; about one XXH3 pass over 4·blockSize + 16 bytes per block.
 */
public final class ChainedXxh3RouterKeys implements RouterKeyFunction {

  private final long modelSeed;

  /** @param model the served model name; different models never share keys */
  public ChainedXxh3RouterKeys(String model) {
    this.modelSeed = LongHashFunction.xx3(0x6b76726f75746572L).hashChars(model);
  }

  @Override
  public long[] keys(long parentRouterKey, int[] tokenIds, int blockSize, String loraName) {
    if (blockSize <= 0) {
      throw new IllegalArgumentException("blockSize must be positive, was " + blockSize);
    }
    long seed = loraName == null ? modelSeed : modelSeed ^ LongHashFunction.xx3(1).hashChars(loraName);
    LongHashFunction f = LongHashFunction.xx3(seed);
    int n = tokenIds.length / blockSize;
    long[] out = new long[n];
    long parent = parentRouterKey;
    long[] pair = new long[2];
    for (int i = 0; i < n; i++) {
      pair[0] = parent;
      pair[1] = f.hashInts(tokenIds, i * blockSize, blockSize);
      long key = f.hashLongs(pair);
      parent = key == 0 ? 1 : key;
      out[i] = parent;
    }
    return out;
  }
}

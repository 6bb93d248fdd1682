package io.kvrouter.protocol;

/**
 * A run of consecutive full blocks the replica newly cached, chained under {@code parentKey}.
 *
 * <p>{@code blockKeys[i]} is the router key of the block whose engine hash is {@code
 * engineHashes[i]}; both arrays have the same length. The arrays are never mutated after the record
 * is built (the event plane is allowed {@code long[]} for speed).
 *
 * @param parentKey router key of the block before the first one, or {@link #ROOT} at block 0
 * @param engineHashes the engine's own hashes (unsigned 64-bit in a {@code long}); engines announce
 *     removals by these
 * @param blockKeys router block keys, never {@link #ROOT}
 * @param tier where the blocks live
 */
public record BlocksStored(long parentKey, long[] engineHashes, long[] blockKeys, Tier tier)
    implements KvEvent {

  /** Parent key of a run that starts at the first block of a sequence. */
  public static final long ROOT = 0L;

  public BlocksStored {
    if (engineHashes.length != blockKeys.length) {
      throw new IllegalArgumentException(
          "engineHashes and blockKeys differ in length: "
              + engineHashes.length
              + " vs "
              + blockKeys.length);
    }
    java.util.Objects.requireNonNull(tier, "tier");
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof BlocksStored b
        && parentKey == b.parentKey
        && tier == b.tier
        && java.util.Arrays.equals(engineHashes, b.engineHashes)
        && java.util.Arrays.equals(blockKeys, b.blockKeys);
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(
        parentKey,
        tier,
        java.util.Arrays.hashCode(engineHashes),
        java.util.Arrays.hashCode(blockKeys));
  }

  @Override
  public String toString() {
    return "BlocksStored[parent="
        + Long.toHexString(parentKey)
        + ", blocks="
        + blockKeys.length
        + ", tier="
        + tier
        + "]";
  }
}

package io.kvrouter.protocol;

/**
 * Blocks the replica evicted, named by the engine's own hashes (as vLLM's BlockRemoved does); each
 * tracker maps them to router keys through its per-replica bridge. The array is never mutated after
 * the record is built.
 */
public record BlocksRemoved(long[] engineHashes, Tier tier) implements KvEvent {

  public BlocksRemoved {
    java.util.Objects.requireNonNull(engineHashes, "engineHashes");
    java.util.Objects.requireNonNull(tier, "tier");
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof BlocksRemoved b
        && tier == b.tier
        && java.util.Arrays.equals(engineHashes, b.engineHashes);
  }

  @Override
  public int hashCode() {
    return 31 * tier.hashCode() + java.util.Arrays.hashCode(engineHashes);
  }

  @Override
  public String toString() {
    return "BlocksRemoved[blocks=" + engineHashes.length + ", tier=" + tier + "]";
  }
}

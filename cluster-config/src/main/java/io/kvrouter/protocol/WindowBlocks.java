package io.kvrouter.protocol;

/**
 * A hybrid model's sliding-window cache group now holds ({@code stored}) or no longer holds the
 * blocks with these router keys. The prefix index matches on the full-attention group only; these
 * events tell the tracker where a full-attention hit is reusable (a hit counts only where the
 * window group holds the window before it, see {@code SlidingWindowHit} in kv-tracker).
 *
 * @param windowTokens the group's window in tokens ({@code kv_cache_spec_sliding_window})
 * @param blockKeys router keys of the blocks
 * @param stored true when the group stored them, false when it dropped them
 */
public record WindowBlocks(int windowTokens, long[] blockKeys, boolean stored) implements KvEvent {

  public WindowBlocks {
    java.util.Objects.requireNonNull(blockKeys, "blockKeys");
    if (windowTokens < 1) {
      throw new IllegalArgumentException("windowTokens must be positive, was " + windowTokens);
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof WindowBlocks w
        && windowTokens == w.windowTokens
        && stored == w.stored
        && java.util.Arrays.equals(blockKeys, w.blockKeys);
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(windowTokens, stored, java.util.Arrays.hashCode(blockKeys));
  }

  @Override
  public String toString() {
    return "WindowBlocks[window="
        + windowTokens
        + ", blocks="
        + blockKeys.length
        + ", stored="
        + stored
        + "]";
  }
}

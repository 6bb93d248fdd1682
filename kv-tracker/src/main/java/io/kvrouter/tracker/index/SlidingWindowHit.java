package io.kvrouter.tracker.index;

import java.util.function.IntPredicate;

/**
 * How much of a full-attention prefix match a hybrid model (one full-attention and one
 * sliding-window cache group) can actually reuse, and whether that is the whole match.
 *
 * <p>Contract: given the full-attention match of {@code matched} leading blocks and which of those
 * blocks the sliding-window group still holds, {@link #creditedBlocks} is the longest reusable
 * prefix: the largest {@code L <= matched} such that the window group holds the {@code
 * contiguousBlocks(window, blockSize)} blocks just before {@code L}; when no such run exists, the
 * leading run of blocks the window group holds (a prefix shorter than the window needs only its own
 * blocks). {@link #classify} names the outcome: {@link Kind#FULL} when the whole match is credited,
 * {@link Kind#PARTIAL} when the full-attention group matched but the window shrank the hit
 * (possibly to 0), {@link Kind#MISS} when nothing matched. A model without a sliding-window group
 * is always full or miss.
 *
 * <p>Cost: O(matched) window look-ups at worst, scanning from the right and stopping at the first
 * qualifying run. Stateless; thread-safe.
 *
 * <p>Implementation notes: the rule is vLLM's hybrid allocator (vllm-project/vllm at 002f3491,
 * {@code vllm/v1/core/single_type_kv_cache_manager.py}, {@code
 * SlidingWindowManager.find_longest_cache_hit}: {@code sliding_window_contiguous_blocks =
 * cdiv(sliding_window - 1, block_size)}, a right-to-left scan for that many consecutive cached
 * blocks, else the leading cached run); the hybrid coordinator ({@code kv_cache_coordinator.py})
 * searches the sliding-window group only within the full-attention hit, so the credited length
 * never exceeds {@code matched}.
 */
public final class SlidingWindowHit {

  /** The class of a replica's match for a hybrid model. */
  public enum Kind {
    /** The whole full-attention match is reusable. */
    FULL,
    /** The full-attention group matched, but the window group shrank the hit (possibly to 0). */
    PARTIAL,
    /** Nothing matched. */
    MISS
  }

  private SlidingWindowHit() {}

  /**
   * Blocks the window group must hold just before a hit point: {@code ceil((window - 1) /
   * blockSize)}, 0 when {@code window <= 1}.
   */
  public static int contiguousBlocks(int windowTokens, int blockSize) {
    if (blockSize < 1) {
      throw new IllegalArgumentException("blockSize must be at least 1, was " + blockSize);
    }
    if (windowTokens <= 1) {
      return 0;
    }
    return (windowTokens - 1 + blockSize - 1) / blockSize;
  }

  /**
   * The reusable leading blocks of a full-attention match of {@code matched} blocks.
   *
   * @param matched leading blocks the full-attention group holds
   * @param contiguous {@link #contiguousBlocks} for the model's window; 0 means no window group
   * @param windowHolds whether the window group holds block {@code i} (0-based prompt position)
   */
  public static int creditedBlocks(int matched, int contiguous, IntPredicate windowHolds) {
    if (matched <= 0) {
      return 0;
    }
    if (contiguous <= 0) {
      return matched;
    }
    int run = 0;
    for (int i = matched - 1; i >= 0; i--) {
      if (windowHolds.test(i)) {
        run++;
        if (run >= contiguous) {
          return i + run;
        }
      } else {
        run = 0;
      }
    }
    return run;
  }

  /** The class of a match of {@code matched} blocks of which {@code credited} are reusable. */
  public static Kind classify(int matched, int credited) {
    if (matched <= 0) {
      return Kind.MISS;
    }
    return credited >= matched ? Kind.FULL : Kind.PARTIAL;
  }
}

package io.kvrouter.tracker.index;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.Tier;
import io.kvrouter.protocol.WindowBlocks;
import org.junit.jupiter.api.Test;

/**
 * The index credits a hybrid replica's full-attention match only where its sliding-window group
 * holds the window before the match's end: full, partial (shrunk, possibly to 0) or miss; a replica
 * without a window group is full or miss as before.
 */
class WindowHoldingsTest {

  private static final int BS = 16;
  private static final int WINDOW = 33; // 2 blocks before the hit point
  private final long[] prompt = {1, 2, 3, 4, 5, 6};

  private PrefixIndex indexWithSixBlocksOn(int... replicas) {
    PrefixIndex index = new PrefixIndex(64);
    for (int r : replicas) {
      index.store(
          r,
          new BlocksStored(
              BlocksStored.ROOT, new long[] {11, 12, 13, 14, 15, 16}, prompt.clone(), Tier.GPU));
    }
    return index;
  }

  private static SlidingWindowHit.Kind kind(PrefixIndex index, int replica, long[] prompt) {
    MatchResult m = new MatchResult();
    index.match(prompt, prompt.length, m);
    int matched = m.matched(replica);
    return SlidingWindowHit.classify(matched, index.windowCredited(replica, prompt, matched, BS));
  }

  @Test
  void fullWhenTheWindowGroupHoldsTheLastWindow() {
    PrefixIndex index = indexWithSixBlocksOn(0);
    index.window(0, new WindowBlocks(WINDOW, prompt.clone(), true));
    index.window(0, new WindowBlocks(WINDOW, new long[] {1, 2, 3}, false)); // left the window
    assertThat(index.windowCredited(0, prompt, 6, BS)).isEqualTo(6);
    assertThat(kind(index, 0, prompt)).isEqualTo(SlidingWindowHit.Kind.FULL);
  }

  @Test
  void partialShrinksToWhereTheWindowIsHeld() {
    PrefixIndex index = indexWithSixBlocksOn(0);
    index.window(0, new WindowBlocks(WINDOW, prompt.clone(), true));
    index.window(0, new WindowBlocks(WINDOW, new long[] {1, 2, 5, 6}, false));
    assertThat(index.windowCredited(0, prompt, 6, BS)).isEqualTo(4); // blocks 3, 4 still held
    assertThat(kind(index, 0, prompt)).isEqualTo(SlidingWindowHit.Kind.PARTIAL);
    index.window(0, new WindowBlocks(WINDOW, new long[] {3}, false));
    assertThat(index.windowCredited(0, prompt, 6, BS)).isZero();
  }

  @Test
  void missWhenNothingMatchesAndNonHybridReplicasAreUnchanged() {
    PrefixIndex index = indexWithSixBlocksOn(1);
    index.window(0, new WindowBlocks(WINDOW, prompt.clone(), true));
    assertThat(kind(index, 0, prompt)).isEqualTo(SlidingWindowHit.Kind.MISS);
    assertThat(index.windowCredited(1, prompt, 6, BS)).isEqualTo(6);
    assertThat(kind(index, 1, prompt)).isEqualTo(SlidingWindowHit.Kind.FULL);
  }

  @Test
  void clearingTheReplicaForgetsItsWindowGroup() {
    PrefixIndex index = indexWithSixBlocksOn(0);
    index.window(0, new WindowBlocks(WINDOW, new long[] {1}, true));
    assertThat(index.windowCredited(0, prompt, 6, BS)).isEqualTo(1);
    index.clearReplica(0);
    assertThat(index.windowCredited(0, prompt, 6, BS)).isEqualTo(6);
  }
}

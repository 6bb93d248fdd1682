package io.kvrouter.tracker.index;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The hybrid-model hit rule: a full-attention match counts only where the sliding-window group
 * still holds the blocks of the window before the hit point (vLLM's {@code
 * SlidingWindowManager.find_longest_cache_hit}).
 */
class SlidingWindowHitTest {

  @Test
  void contiguousBlocksIsWindowMinusOneOverBlockSizeRoundedUp() {
    // vLLM's test case: block_size 2, sliding_window 4 -> 2 blocks.
    assertThat(SlidingWindowHit.contiguousBlocks(4, 2)).isEqualTo(2);
    assertThat(SlidingWindowHit.contiguousBlocks(33, 16)).isEqualTo(2);
    assertThat(SlidingWindowHit.contiguousBlocks(34, 16)).isEqualTo(3);
    assertThat(SlidingWindowHit.contiguousBlocks(0, 16)).isZero();
  }

  @Test
  void fullWhenTheWindowBeforeTheMatchEndIsHeld() {
    Set<Integer> held = Set.of(6, 7); // blocks 0..5 left the window
    int credited = SlidingWindowHit.creditedBlocks(8, 2, held::contains);
    assertThat(credited).isEqualTo(8);
    assertThat(SlidingWindowHit.classify(8, credited)).isEqualTo(SlidingWindowHit.Kind.FULL);
  }

  @Test
  void partialShrinksToTheLastPointWhereTheWindowIsHeld() {
    // The window group dropped block 7 but holds 3 and 4: the hit ends after block 4.
    Set<Integer> held = Set.of(0, 3, 4, 6);
    int credited = SlidingWindowHit.creditedBlocks(8, 2, held::contains);
    assertThat(credited).isEqualTo(5);
    assertThat(SlidingWindowHit.classify(8, credited)).isEqualTo(SlidingWindowHit.Kind.PARTIAL);
  }

  @Test
  void partialFallsBackToTheLeadingRunShorterThanTheWindow() {
    Set<Integer> held = Set.of(0, 2, 5);
    int credited = SlidingWindowHit.creditedBlocks(8, 3, held::contains);
    assertThat(credited).isEqualTo(1);
    assertThat(SlidingWindowHit.classify(8, credited)).isEqualTo(SlidingWindowHit.Kind.PARTIAL);
  }

  @Test
  void partialCanCreditNothing() {
    int credited = SlidingWindowHit.creditedBlocks(8, 2, i -> false);
    assertThat(credited).isZero();
    assertThat(SlidingWindowHit.classify(8, credited)).isEqualTo(SlidingWindowHit.Kind.PARTIAL);
  }

  @Test
  void missWhenNothingMatched() {
    assertThat(SlidingWindowHit.creditedBlocks(0, 2, i -> true)).isZero();
    assertThat(SlidingWindowHit.classify(0, 0)).isEqualTo(SlidingWindowHit.Kind.MISS);
  }

  @Test
  void noWindowGroupIsAlwaysFullOrMiss() {
    assertThat(SlidingWindowHit.creditedBlocks(8, 0, i -> false)).isEqualTo(8);
    assertThat(SlidingWindowHit.classify(8, 8)).isEqualTo(SlidingWindowHit.Kind.FULL);
  }

  @Test
  void neverCreditsBeyondTheFullAttentionMatch() {
    assertThat(SlidingWindowHit.creditedBlocks(3, 2, i -> true)).isEqualTo(3);
  }
}

package io.kvrouter.tracker.index;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.Tier;
import org.junit.jupiter.api.Test;

class PrefixIndexTest {

  private static BlocksStored stored(Tier tier, long[] hashes, long... keys) {
    return new BlocksStored(BlocksStored.ROOT, hashes, keys, tier);
  }

  private static int matched(PrefixIndex index, int replica, long... prompt) {
    MatchResult m = new MatchResult();
    index.match(prompt, prompt.length, m);
    return m.matched(replica);
  }

  @Test
  void aRunOfEqualHolders_stillExtendsAReplicaThatOnlyAPredictionCovers() {
    PrefixIndex index = new PrefixIndex(16);
    index.store(0, stored(Tier.GPU, new long[] {11, 12, 13, 14}, 1, 2, 3, 4));
    index.predict(1, new long[] {1, 2, 3, 4}, 0, 4, 100);
    MatchResult m = new MatchResult();
    index.match(new long[] {1, 2, 3, 4}, 4, m);
    assertThat(m.matched(0)).isEqualTo(4);
    assertThat(m.gpu(0)).isEqualTo(4);
    assertThat(m.matched(1)).isEqualTo(4);
    assertThat(m.predicted(1)).isEqualTo(4);
  }

  @Test
  void aSharedPrefixOnManyReplicas_countsEveryBlockForEach_andStopsEachAtItsOwnEnd() {
    PrefixIndex index = new PrefixIndex(64);
    for (int r = 0; r < 8; r++) {
      index.store(r, stored(Tier.GPU, new long[] {101, 102, 103}, 1, 2, 3));
    }
    index.store(3, stored(Tier.CPU, new long[] {104, 105}, 4, 5));
    MatchResult m = new MatchResult();
    index.match(new long[] {1, 2, 3, 4, 5, 6}, 6, m);
    for (int r = 0; r < 8; r++) {
      assertThat(m.matched(r)).as("replica %d", r).isEqualTo(r == 3 ? 5 : 3);
      assertThat(m.gpu(r)).isEqualTo(3);
      assertThat(m.gpuLeading(r)).isEqualTo(3);
    }
    assertThat(m.cpu(3)).isEqualTo(2);
    assertThat(m.longest()).isEqualTo(5);
  }

  @Test
  void storeThenStoreOtherTierOfSameKey_holdsBothTiers() {
    PrefixIndex index = new PrefixIndex(4);
    index.store(0, stored(Tier.GPU, new long[] {5}, 1));
    index.store(0, stored(Tier.CPU, new long[] {5, 6}, 1, 1));
    assertThat(index.holds(0, 1, Tier.GPU)).isTrue();
    assertThat(index.holds(0, 1, Tier.CPU)).isTrue();
    assertThat(index.digest(0).count()).isEqualTo(2);
  }

  @Test
  void match_countsLeadingBlocksPerReplicaByBestTier_andStopsAtTheFirstGap() {
    PrefixIndex index = new PrefixIndex(4);
    index.store(0, stored(Tier.GPU, new long[] {11, 12}, 1, 2));
    index.store(0, stored(Tier.CPU, new long[] {13}, 3));
    index.store(0, stored(Tier.GPU, new long[] {15}, 5)); // after a gap: not counted
    index.store(1, stored(Tier.DISK, new long[] {21}, 1));
    MatchResult m = new MatchResult();
    index.match(new long[] {1, 2, 3, 4, 5}, 5, m);
    assertThat(m.matched(0)).isEqualTo(3);
    assertThat(m.gpu(0)).isEqualTo(2);
    assertThat(m.cpu(0)).isEqualTo(1);
    assertThat(m.gpuLeading(0)).isEqualTo(2);
    assertThat(m.matched(1)).isEqualTo(1);
    assertThat(m.disk(1)).isEqualTo(1);
    assertThat(m.longest()).isEqualTo(3);
    assertThat(m.holders()).containsExactlyInAnyOrder(0, 1);
  }

  @Test
  void removal_byEngineHash_endsOnlyThatTier() {
    PrefixIndex index = new PrefixIndex(4);
    index.store(0, stored(Tier.GPU, new long[] {11}, 1));
    index.store(0, stored(Tier.CPU, new long[] {11}, 1));
    index.remove(0, new BlocksRemoved(new long[] {11}, Tier.GPU));
    assertThat(index.holds(0, 1, Tier.GPU)).isFalse();
    assertThat(index.holds(0, 1, Tier.CPU)).isTrue();
    index.remove(0, new BlocksRemoved(new long[] {11}, Tier.CPU));
    assertThat(index.nodes()).isZero();
    assertThat(index.bridgeSize(0)).isZero();
  }

  @Test
  void blockHeldByManyReplicas_overflowsAndShrinksBack() {
    PrefixIndex index = new PrefixIndex(4);
    for (int r = 0; r < 40; r++) {
      index.store(r, stored(Tier.GPU, new long[] {100 + r}, 7));
    }
    MatchResult m = new MatchResult();
    index.match(new long[] {7}, 1, m);
    assertThat(m.holders()).hasSize(40);
    for (int r = 0; r < 39; r++) {
      index.remove(r, new BlocksRemoved(new long[] {100 + r}, Tier.GPU));
    }
    index.match(new long[] {7}, 1, m);
    assertThat(m.holders()).containsExactly(39);
  }

  @Test
  void predictedRun_coversItsBlocksAfterTheReplicasHeldPrefix_untilItsDeadline() {
    PrefixIndex index = new PrefixIndex(4);
    index.store(0, stored(Tier.GPU, new long[] {11, 12}, 1, 2));
    index.predict(0, new long[] {3, 4, 5}, 0, 3, 100);
    MatchResult m = new MatchResult();
    index.match(new long[] {1, 2, 3, 4, 9}, 5, m);
    assertThat(m.matched(0)).isEqualTo(4);
    assertThat(m.predicted(0)).isEqualTo(2);
    assertThat(m.gpuLeading(0)).isEqualTo(2);
    assertThat(matched(index, 1, 1, 2, 3)).isZero(); // another replica: nothing
    index.expirePredicted(99);
    assertThat(matched(index, 0, 1, 2, 3, 4)).isEqualTo(4);
    index.expirePredicted(100);
    assertThat(matched(index, 0, 1, 2, 3, 4)).isEqualTo(2);
    assertThat(index.predictedRuns()).isZero();
  }

  @Test
  void predictedRun_isNotReachedPastAGapInTheHeldPrefix() {
    PrefixIndex index = new PrefixIndex(4);
    index.store(0, stored(Tier.GPU, new long[] {11}, 1));
    index.predict(0, new long[] {3, 4}, 0, 2, 100); // predicts after block 2, which 0 lacks
    assertThat(matched(index, 0, 1, 2, 3, 4)).isEqualTo(1);
  }

  @Test
  void confirmedThenPredicted_countsAsGpu() {
    PrefixIndex index = new PrefixIndex(4);
    index.predict(0, new long[] {1, 2}, 0, 2, 100);
    index.store(0, stored(Tier.GPU, new long[] {11}, 1));
    MatchResult m = new MatchResult();
    index.match(new long[] {1, 2}, 2, m);
    assertThat(m.gpu(0)).isEqualTo(1);
    assertThat(m.predicted(0)).isEqualTo(1);
  }

  @Test
  void identicalPrediction_extendsTheDeadline_withoutAddingARun() {
    PrefixIndex index = new PrefixIndex(4);
    long[] keys = {1, 2, 3};
    index.predict(0, keys, 0, 3, 100);
    index.predict(0, keys.clone(), 0, 3, 200);
    assertThat(index.predictedRuns()).isEqualTo(1);
    index.expirePredicted(150);
    assertThat(matched(index, 0, 1, 2, 3)).isEqualTo(3);
    index.expirePredicted(200);
    assertThat(matched(index, 0, 1, 2, 3)).isZero();
  }

  @Test
  void longerPrediction_replacesTheShorter_butAnEarlierDeadlineDoesNotCutItShort() {
    PrefixIndex index = new PrefixIndex(4);
    index.predict(0, new long[] {1, 2}, 0, 2, 100);
    index.predict(0, new long[] {1, 2, 3}, 0, 3, 200);
    assertThat(index.predictedRuns()).isEqualTo(1);
    assertThat(matched(index, 0, 1, 2, 3)).isEqualTo(3);

    PrefixIndex other = new PrefixIndex(4);
    other.predict(0, new long[] {1, 2}, 0, 2, 200);
    other.predict(0, new long[] {1, 2, 3}, 0, 3, 100); // longer but ends sooner: kept apart
    assertThat(other.predictedRuns()).isEqualTo(2);
    other.expirePredicted(100);
    assertThat(matched(other, 0, 1, 2, 3)).isEqualTo(2);
  }

  @Test
  void divergingPredictions_coverEachTheirOwnBranch() {
    PrefixIndex index = new PrefixIndex(4);
    index.predict(0, new long[] {1, 2, 3}, 0, 3, 100);
    index.predict(0, new long[] {1, 2, 9}, 0, 3, 100);
    assertThat(matched(index, 0, 1, 2, 3)).isEqualTo(3);
    assertThat(matched(index, 0, 1, 2, 9)).isEqualTo(3);
    assertThat(matched(index, 0, 1, 2, 8)).isEqualTo(2);
  }

  @Test
  void dropReplica_endsItsPredictions() {
    PrefixIndex index = new PrefixIndex(4);
    index.predict(0, new long[] {1, 2}, 0, 2, 100);
    index.predict(1, new long[] {1, 2}, 0, 2, 100);
    index.dropReplica(0);
    assertThat(matched(index, 0, 1, 2)).isZero();
    assertThat(matched(index, 1, 1, 2)).isEqualTo(2);
    assertThat(index.predictedRuns()).isEqualTo(1);
  }
}

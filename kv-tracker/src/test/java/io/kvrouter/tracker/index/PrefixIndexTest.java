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

  @Test
  void memoryBudget_evictsTheLeastRecentlyMatchedBlocks_andKeepsTheMatchedOnes() {
    long budget =
        1_000L * (IndexBudget.NODE_BYTES + IndexBudget.SUMMARY_BYTES + IndexBudget.HOLDING_BYTES);
    PrefixIndex index = new PrefixIndex(16, budget);
    long[] hot = new long[32];
    for (int i = 0; i < hot.length; i++) {
      hot[i] = 1_000_000 + i;
    }
    index.store(0, new BlocksStored(BlocksStored.ROOT, hot.clone(), hot, Tier.GPU));
    MatchResult m = new MatchResult();
    for (int batch = 0; batch < 200; batch++) {
      long[] cold = new long[32];
      for (int i = 0; i < cold.length; i++) {
        cold[i] = 1 + batch * 32L + i;
      }
      index.store(batch % 2, new BlocksStored(BlocksStored.ROOT, cold.clone(), cold, Tier.GPU));
      index.match(hot, hot.length, m); // the hot prompt keeps being routed
      assertThat(index.estimatedBytes()).isLessThanOrEqualTo(budget);
    }
    index.match(hot, hot.length, m);
    assertThat(m.matched(0)).as("the matched prompt survived 6,400 newer blocks").isEqualTo(32);
    assertThat(index.nodes()).isLessThanOrEqualTo(1_000).isGreaterThan(800);
    assertThat(index.evictedHoldings()).isGreaterThan(5_000);
    long[] oldest = {1, 2, 3};
    index.match(oldest, 3, m);
    assertThat(m.longest()).as("the oldest unmatched blocks went first").isZero();
    assertThat(index.digest(0).count() + index.digest(1).count()).isEqualTo(index.nodes());
  }

  private static long[] range(long from, int n) {
    long[] keys = new long[n];
    for (int i = 0; i < n; i++) {
      keys[i] = from + i;
    }
    return keys;
  }

  @Test
  void aRunMatchedWhole_isClaimed_andLosingOneOfItsBlocksEndsTheMatchThereAgain() {
    PrefixIndex index = new PrefixIndex(64, 0L, 4);
    long[] prompt = range(1, 16);
    index.store(0, stored(Tier.GPU, range(101, 16), prompt));
    assertThat(matched(index, 0, prompt)).isEqualTo(16);
    assertThat(index.runClaims()).as("runs [4,8), [8,12), [12,16)").isEqualTo(3);
    assertThat(matched(index, 0, prompt)).isEqualTo(16);

    index.remove(0, new BlocksRemoved(new long[] {110}, Tier.GPU)); // key 10, in run [8,12)
    assertThat(index.runClaims()).isEqualTo(2);
    MatchResult m = new MatchResult();
    index.match(prompt, prompt.length, m);
    assertThat(m.matched(0)).isEqualTo(9);
    assertThat(m.gpu(0)).isEqualTo(9);
    assertThat(m.gpuLeading(0)).isEqualTo(9);
  }

  @Test
  void aRunHeldPartlyOnCpu_isNotClaimed_andLosingItsGpuCopyCountsItOnCpu() {
    PrefixIndex index = new PrefixIndex(64, 0L, 4);
    long[] prompt = range(1, 8);
    index.store(0, stored(Tier.GPU, range(101, 8), prompt));
    index.store(0, stored(Tier.CPU, new long[] {106}, 6));
    assertThat(matched(index, 0, prompt)).isEqualTo(8);
    assertThat(index.runClaims()).isEqualTo(1);

    index.remove(0, new BlocksRemoved(new long[] {106}, Tier.GPU));
    assertThat(index.runClaims()).isZero();
    MatchResult m = new MatchResult();
    index.match(prompt, prompt.length, m);
    assertThat(m.matched(0)).isEqualTo(8);
    assertThat(m.gpu(0)).isEqualTo(7);
    assertThat(m.cpu(0)).isEqualTo(1);
    assertThat(m.gpuLeading(0)).isEqualTo(5);
    assertThat(index.runClaims()).as("[4,8) is no longer held whole on GPU").isZero();
  }

  @Test
  void clearingAReplica_endsItsClaims_andItsMatch() {
    PrefixIndex index = new PrefixIndex(64, 0L, 4);
    long[] prompt = range(1, 12);
    index.store(0, stored(Tier.GPU, range(101, 12), prompt));
    index.store(1, stored(Tier.GPU, range(201, 12), prompt));
    assertThat(matched(index, 1, prompt)).isEqualTo(12);
    assertThat(index.runClaims()).isEqualTo(4);

    index.clearReplica(0);
    index.store(0, stored(Tier.GPU, range(101, 4), range(1, 4)));
    assertThat(matched(index, 0, prompt)).as("the runs after the first are gone").isEqualTo(4);
    assertThat(matched(index, 1, prompt)).isEqualTo(12);
  }

  @Test
  void aPredictionStartingInsideAClaimedRun_stillCarriesItsReplicaPastItsLastBlock() {
    PrefixIndex index = new PrefixIndex(64, 0L, 4);
    long[] prompt = range(1, 12);
    index.store(0, stored(Tier.GPU, range(101, 8), range(1, 8)));
    assertThat(matched(index, 0, prompt)).isEqualTo(8);
    index.predict(0, prompt, 6, 12, 100);
    MatchResult m = new MatchResult();
    index.match(prompt, prompt.length, m);
    assertThat(m.matched(0)).isEqualTo(12);
    assertThat(m.gpu(0)).isEqualTo(8);
    assertThat(m.predicted(0)).isEqualTo(4);
  }

  /** Blocks {@code from..from+n-1} on GPU of {@code replica}, engine hashes {@code key + 1000}. */
  private static void storeGpu(PrefixIndex index, int replica, long from, int n) {
    long[] keys = range(from, n);
    index.store(replica, stored(Tier.GPU, range(from + 1_000, n), keys));
  }

  /**
   * An index of runs of four blocks under a budget of about 40 nodes, presized so that its table
   * never grows (a rehash drops every claim, which would hide what the tests look for), where
   * replica 0 holds blocks 1..8 on GPU and a match has claimed the run of blocks 5..8.
   */
  private static PrefixIndex budgetedWithClaimedRun() {
    long budget = 40L * (IndexBudget.NODE_BYTES + IndexBudget.SUMMARY_BYTES);
    budget += 40L * IndexBudget.HOLDING_BYTES;
    PrefixIndex index = new PrefixIndex(256, budget, 4);
    storeGpu(index, 0, 1, 8);
    assertThat(matched(index, 0, range(1, 8))).isEqualTo(8);
    assertThat(index.runClaims()).as("run [4,8) claimed").isEqualTo(1);
    return index;
  }

  @Test
  void aBlockTheBudgetEvicts_endsTheClaimOfItsRun_soTheMatchStopsWhereTheBlocksAreGone() {
    PrefixIndex index = budgetedWithClaimedRun();
    long[] prompt = range(1, 8);
    long[] head = range(1, 4);
    long cold = 10_000;
    int batches = 0;
    // Keep blocks 1..4 recently matched (a match of four blocks never reaches the claimed run) and
    // store newer blocks until the budget evicts a block of the claimed run.
    while (index.holds(0, 5, Tier.GPU)
        && index.holds(0, 6, Tier.GPU)
        && index.holds(0, 7, Tier.GPU)
        && index.holds(0, 8, Tier.GPU)) {
      assertThat(batches++).as("the budget evicts the run nobody matched").isLessThan(50);
      assertThat(matched(index, 0, head)).isEqualTo(4);
      storeGpu(index, 1, cold, 8);
      cold += 8;
    }
    assertThat(index.evictedHoldings()).isPositive();
    assertThat(matched(index, 0, head)).as("the matched blocks 1..4 stay").isEqualTo(4);
    int firstGone = 4;
    while (index.holds(0, firstGone + 1, Tier.GPU)) {
      firstGone++;
    }
    assertThat(matched(index, 0, prompt))
        .as("the match ends at the first block the budget evicted")
        .isEqualTo(firstGone);
    assertThat(index.runClaims()).isZero();
  }

  @Test
  void aRunMatchedThroughItsClaim_staysRecentlyMatchedForTheBudget() {
    PrefixIndex index = budgetedWithClaimedRun();
    long[] prompt = range(1, 8);
    long cold = 10_000;
    for (int batch = 0; batch < 40; batch++) {
      storeGpu(index, 1, cold, 8);
      cold += 8;
      // The claim serves this match: blocks 5..8 are not probed, yet they were matched now.
      assertThat(matched(index, 0, prompt)).as("after %d newer batches", batch + 1).isEqualTo(8);
    }
    assertThat(index.evictedHoldings()).as("the budget did evict").isGreaterThan(100);
    assertThat(index.runClaims()).isEqualTo(1);
  }
}

package io.kvrouter.loadtest.baselines;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvrouter.protocol.Tier;
import io.kvrouter.tracker.policy.Fixture;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.Visibility;
import org.junit.jupiter.api.Test;

class LlmdPrecisePolicyTest {

  private static final long[] PROMPT = Fixture.prompt(1, 10);

  /**
   * Replica 2 alone holds the first of {@link #PROMPT}'s ten blocks, with this queue and KV use.
   */
  private static Fixture soleHolderOfOneBlockOfTen(int replicas, int waiting, double kvUsage) {
    Fixture f = new Fixture(replicas);
    f.cache(2, PROMPT, 1, Tier.GPU);
    f.waiting[2] = waiting;
    f.kv[2] = kvUsage;
    return f;
  }

  /**
   * Replica 0 holds all 10 blocks, replica 1 holds 9. Min-max over the holders gives them 1 and 0:
   * replica 0 scores 2 + 1 + 0 (its queue is the longest) = 3, replica 1 0 + 1 + 1 = 2, so llm-d
   * waits behind replica 0's queue. kvrouter counts the one missing block against replica 0's
   * queued prefill and goes to replica 1. (Scoring matched / prompt blocks, as llm-d does since
   * e6f6b84f, gives replica 1 1.8 + 1 + 1 and chooses it too.)
   */
  @Test
  void v0_8_0_prefixScores_areMinMaxNormalisedOverTheHolders_soOneMoreBlockOutweighsAQueue() {
    Fixture f = new Fixture(3);
    long[] prompt = Fixture.prompt(1, 10);
    f.cache(0, prompt, 10, Tier.GPU);
    f.cache(1, prompt, 9, Tier.GPU);
    f.waiting[0] = 2;
    f.prefill[0] = 4_000;
    Policy p = Fixture.policy("llmd_precise_v0_8_0", 1);

    assertThat(f.rank(p, prompt)[0]).isEqualTo(0);
    assertThat(f.kvrouterPick(prompt)).isEqualTo(1);
  }

  @Test
  void v0_8_0_aSingleHolder_scoresOne_andTheQueueAndKvUsageScoresBreakTheRest() {
    Fixture f = soleHolderOfOneBlockOfTen(3, 3, 0.9); // still the full prefix score 2
    f.waiting[0] = 1;
    // r2 = 2 + 0.1 + 0 = 2.1; r1 = 0 + 1 + 1 = 2; r0 = 0 + 1 + 2/3
    assertThat(f.rank(Fixture.policy("llmd_precise_v0_8_0", 1), PROMPT)).containsExactly(2, 1, 0);
  }

  /**
   * The same state scored as llm-d-router scores since e6f6b84f: replica 2's one block of ten is
   * worth 2 × 0.1, so r2 = 0.2 + 0.1 + 0 = 0.3, r1 = 0 + 1 + 1 = 2, r0 = 0 + 1 + 2/3. Min-max over
   * the holders (v0.8.0) puts replica 2 first instead.
   */
  @Test
  void prefixScores_areMatchedOverTotalBlocks_soOneBlockOfTenWeighsAFifthOfAPoint() {
    Fixture f = soleHolderOfOneBlockOfTen(3, 3, 0.9);
    f.waiting[0] = 1;
    assertThat(f.rank(Fixture.policy("llmd_precise", 1), PROMPT)).containsExactly(1, 0, 2);
  }

  /**
   * Why llm-d sends everything to one pod when every prompt starts with the same block and that
   * block is confirmed on one pod only (the sweep's spread arrivals: the second request arrives
   * after the first one's KV events): the sole holder scores the full prefix 2, and a pod holding
   * none can make up at most 1 (queue) + 1 (KV), so the holder wins even with the longest queue and
   * 99 % of its KV cache in use. Only a full KV cache ties it. (Scoring a sole holder by its share
   * of the prompt, 1 of 10 blocks, sends the request to an idle pod and fails this test.)
   */
  @Test
  void v0_8_0_aSoleHolderOfTheFirstBlock_outscoresIdlePodsHoldingNone_untilItsKvCacheIsFull() {
    Fixture f = soleHolderOfOneBlockOfTen(4, 300, 0.99);
    Policy p = Fixture.policy("llmd_precise_v0_8_0", 1);
    // r2 = 2 × 1 + (1 − 0.99) + 0 = 2.01; r0, r1, r3 = 0 + 1 + 1 = 2
    for (int i = 0; i < 20; i++) {
      assertThat(f.rank(p, PROMPT)[0]).isEqualTo(2);
    }
  }

  /**
   * What e6f6b84f fixed: the sole holder of a shared first block scores 2 × 1/10 = 0.2 + 0.01 + 0
   * and loses to any idle pod (0 + 1 + 1), so a queue of 300 no longer draws every request.
   */
  @Test
  void aSoleHolderOfTheFirstBlock_withALongQueue_losesToIdlePods() {
    Fixture f = soleHolderOfOneBlockOfTen(4, 300, 0.99);
    Policy p = Fixture.policy("llmd_precise", 1);
    for (int i = 0; i < 20; i++) {
      assertThat(f.rank(p, PROMPT)[0]).isNotEqualTo(2);
      assertThat(f.rank(p, PROMPT)[3]).isEqualTo(2);
    }
  }

  /**
   * llm-d-router's producer truncates the tier-weighed match to whole blocks ({@code int(...)}): 64
   * CPU blocks weigh 51.2 and count 51, the same as 51 GPU blocks, so 0.002 of KV usage decides for
   * replica 1. Without the truncation replica 0's extra 0.2 block (2 × 0.2 / 64 = 0.006) wins.
   */
  @Test
  void weighedMatches_areTruncatedToWholeBlocks() {
    long[] prompt = Fixture.prompt(700, 64);
    Fixture f = new Fixture(2).holding(prompt, new int[] {64, 51}, Tier.CPU, Tier.GPU);
    f.kv[0] = 0.002;
    assertThat(f.rank(Fixture.policy("llmd_precise", 1), prompt)[0]).isEqualTo(1);
  }

  @Test
  void sees_engineMetricsEvery50ms_confirmedBlocksOnly_asOneActivePicker() {
    for (String name : new String[] {"llmd_precise", "llmd_precise_v0_8_0"}) {
      Visibility v = Fixture.policy(name, 1).visibility();
      assertThat(v.metricsIntervalMillis()).isEqualTo(50);
      assertThat(v.predictedBlocks()).isFalse();
      assertThat(v.peerReservations()).isFalse();
      assertThat(v.globalScheduler()).isTrue();
    }
  }

  /**
   * llm-d weighs a CPU-held block 0.8 (its default backend config): 64 blocks on CPU score 51.2,
   * below 56 on GPU and above 32 on GPU; counted as GPU they would come first.
   */
  @Test
  void cpuBlocks_weighEightTenths() {
    long[] prompt = Fixture.prompt(700, 64);
    Fixture f =
        new Fixture(3).holding(prompt, new int[] {56, 64, 32}, Tier.GPU, Tier.CPU, Tier.GPU);
    assertThat(f.rank(Fixture.policy("llmd_precise", 1), prompt)).containsExactly(0, 1, 2);
    assertThat(f.rank(Fixture.policy("llmd_precise_v0_8_0", 1), prompt)).containsExactly(0, 1, 2);
    f.index.match(prompt, prompt.length, f.match);
    assertThat(LlmdPrecisePolicy.weighedHit(f.match, 1)).isCloseTo(51.2, within(1e-9));
  }
}

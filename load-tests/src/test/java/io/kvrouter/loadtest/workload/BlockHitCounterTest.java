package io.kvrouter.loadtest.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BlockHitCounterTest {

  @Test
  void firstRequest_missesItsOwnBlocks_becauseLookupPrecedesInsertion() {
    BlockHitCounter counter = new BlockHitCounter(512, 1, 0);
    assertThat(counter.record(new long[] {1, 2, 3}, 1500, 0)).isZero();
    assertThat(counter.record(new long[] {1, 2, 3}, 1500, 0)).isEqualTo(3);
    assertThat(counter.rates().blockHitRate()).isEqualTo(0.5);
  }

  @Test
  void match_stopsAtFirstMissingBlock_evenIfLaterBlocksAreHeld() {
    BlockHitCounter counter = new BlockHitCounter(512, 1, 0);
    counter.record(new long[] {1, 2, 3, 4}, 2048, 0);
    assertThat(counter.record(new long[] {1, 9, 3, 4}, 2048, 0)).isEqualTo(1);
  }

  @Test
  void replicas_doNotShareBlocks() {
    BlockHitCounter counter = new BlockHitCounter(512, 2, 0);
    counter.record(new long[] {1, 2}, 1024, 0);
    assertThat(counter.record(new long[] {1, 2}, 1024, 1)).isZero();
    assertThat(counter.peek(new long[] {1, 2}, 0)).isEqualTo(2);
  }

  @Test
  void cachedTokens_areCappedToInputLength_whenTheTruncatedLastBlockMatches() {
    BlockHitCounter counter = new BlockHitCounter(512, 1, 0);
    counter.record(new long[] {1, 2}, 600, 0);
    counter.record(new long[] {1, 2}, 600, 0);
    HitRates rates = counter.rates();
    assertThat(rates.cachedTokens()).isEqualTo(600);
    assertThat(rates.promptTokens()).isEqualTo(1200);
    assertThat(rates.tokenHitRate()).isEqualTo(0.5);
  }

  @Test
  void peek_changesNothing() {
    BlockHitCounter counter = new BlockHitCounter(512, 1, 0);
    counter.record(new long[] {1}, 512, 0);
    counter.peek(new long[] {1, 2}, 0);
    assertThat(counter.heldBlocks(0)).isEqualTo(1);
    assertThat(counter.rates().requests()).isEqualTo(1);
  }

  @Test
  void boundedReplica_evictsLeastRecentlyUsed_prefixTailBeforeHead() {
    BlockHitCounter counter = new BlockHitCounter(16, 1, 4);
    counter.record(new long[] {1, 2, 3}, 48, 0);
    counter.record(
        new long[] {7, 8}, 32, 0); // 5 ids into 4 slots: evicts 3, the tail of the older prefix
    assertThat(counter.heldBlocks(0)).isEqualTo(4);
    assertThat(counter.peek(new long[] {1, 2, 3}, 0)).isEqualTo(2);
    assertThat(counter.peek(new long[] {7, 8}, 0)).isEqualTo(2);
  }

  @Test
  void recordByIndex_usesTheWorkloadsTraceBlocks() {
    Workload trace = Traces.conversation();
    BlockHitCounter counter = new BlockHitCounter(trace, 2, 0);
    counter.record(66, 0);
    // request 133 shares its first 5 ids with request 66, then differs
    assertThat(counter.peek(133, 0)).isEqualTo(5);
    assertThat(counter.peek(133, 1)).isZero();
    assertThat(counter.record(133, 0)).isEqualTo(5);
    assertThat(counter.rates().matchedBlocks()).isEqualTo(5);
  }

  @Test
  void counterOverAGeneratedWorkload_needsDerivedBlockIds_becauseItHasNoTraceBlocks() {
    Workload gsp =
        Workloads.byName("sglang-gsp", java.util.Map.of("groups", "2", "promptsPerGroup", "2"), 1);
    assertThatThrownBy(() -> new BlockHitCounter(gsp, 1, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no trace block ids");
  }

  @Test
  void derivedBlockIds_countTheSharedSystemPromptOfTheSglangWorkload() {
    Workload gsp = Workloads.byName("sglang-gsp", java.util.Map.of(), 1);
    HitRates rates = PrefixCacheBound.singleCache(gsp, 64);
    // per group: the first prompt misses all 34 blocks, the other 15 hit the 32 system-prompt
    // blocks
    assertThat(rates.totalBlocks()).isEqualTo(1024 * 34);
    assertThat(rates.matchedBlocks()).isEqualTo(64 * 15 * 32);
    assertThat(rates.cachedTokens()).isEqualTo(64L * 15 * 2048);
  }

  @Test
  void derivedBlockIds_agreeExactlyAsFarAsFullBlocksAgree() {
    TokenExpander e = new TokenExpander(4);
    PromptTokens a = PromptTokens.empty(e).extend(1, 100).extend(2, 50);
    PromptTokens b = PromptTokens.empty(e).extend(1, 100).extend(3, 50);
    long[] ia = ChainedBlockIds.of(a, 16);
    long[] ib = ChainedBlockIds.of(b, 16);
    assertThat(ia).hasSize(10);
    assertThat(java.util.Arrays.copyOf(ib, 6)).containsExactly(java.util.Arrays.copyOf(ia, 6));
    assertThat(ib[6])
        .isNotEqualTo(ia[6]); // block 6 holds tokens 96..111, four of them from the shared segment
    assertThat(ChainedBlockIds.of(a.prefix(40), 16)[2])
        .isNotEqualTo(ia[2]); // a partial block is its own id
  }

  @Test
  void unknownReplica_isRejected() {
    BlockHitCounter counter = new BlockHitCounter(512, 2, 0);
    assertThatThrownBy(() -> counter.record(new long[] {1}, 10, 2))
        .hasMessageContaining("replica 2 outside [0, 2)");
  }
}

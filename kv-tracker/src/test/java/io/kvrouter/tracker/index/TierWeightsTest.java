package io.kvrouter.tracker.index;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.Tier;
import org.junit.jupiter.api.Test;

class TierWeightsTest {

  private static final long[] PROMPT = {1, 2, 3, 4};
  private static final long[] HASHES = {11, 12, 13, 14};

  private static BlocksStored stored(Tier tier) {
    return new BlocksStored(BlocksStored.ROOT, HASHES, PROMPT, tier);
  }

  private static MatchResult match(PrefixIndex index) {
    MatchResult m = new MatchResult();
    index.match(PROMPT, PROMPT.length, m);
    return m;
  }

  @Test
  void theSameRunCountsLessOnCpuAndLessStillOnDisk_byEachPeersPublishedWeights() {
    PrefixIndex index = new PrefixIndex(16);
    index.store(0, stored(Tier.GPU));
    index.store(1, stored(Tier.CPU));
    index.store(2, stored(Tier.DISK));
    MatchResult m = match(index);
    for (int r = 0; r < 3; r++) {
      assertThat(m.matched(r)).isEqualTo(4);
    }
    TierWeights dynamo = TierWeights.dynamo();
    assertThat(m.credited(0, dynamo)).isEqualTo(4.0);
    assertThat(m.credited(1, dynamo)).isEqualTo(3.0);
    assertThat(m.credited(2, dynamo)).isEqualTo(1.0);
    TierWeights llmd = TierWeights.llmd();
    assertThat(m.credited(1, llmd)).isEqualTo(3.2);
    assertThat(m.credited(2, llmd)).isEqualTo(4.0); // no weight for disk: llm-d's default 1.0
  }

  @Test
  void blocksOffloadedToCpuThenEvictedFromGpu_stillMatchTheirReplica_atTheCpuCredit() {
    PrefixIndex index = new PrefixIndex(16);
    index.store(0, stored(Tier.GPU));
    index.store(0, stored(Tier.CPU));
    assertThat(match(index).credited(0, TierWeights.dynamo())).isEqualTo(4.0);
    // the engine evicts the last two blocks from GPU; its CPU tier still holds them
    index.remove(0, new BlocksRemoved(new long[] {13, 14}, Tier.GPU));
    MatchResult m = match(index);
    assertThat(m.matched(0)).isEqualTo(4);
    assertThat(m.gpu(0)).isEqualTo(2);
    assertThat(m.cpu(0)).isEqualTo(2);
    assertThat(m.credited(0, TierWeights.dynamo())).isEqualTo(2 + 2 * 0.75);
  }

  @Test
  void weightsOutsideZeroToOne_areRejected() {
    assertThatThrownBy(() -> new TierWeights(1, 0.9, 1.5, 0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new TierWeights(1, 0.9, Double.NaN, 0))
        .isInstanceOf(IllegalArgumentException.class);
  }
}

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

  @Test
  void storeThenStoreOtherTierOfSameKey_holdsBothTiers() {
    PrefixIndex index = new PrefixIndex(4);
    index.store(0, stored(Tier.GPU, new long[] {5}, 1));
    index.store(0, stored(Tier.CPU, new long[] {5, 6}, 1, 1));
    assertThat(index.holds(0, 1, Tier.GPU)).isTrue();
    assertThat(index.holds(0, 1, Tier.CPU)).isTrue();
    assertThat(index.digest(0).count()).isEqualTo(2);
  }
}

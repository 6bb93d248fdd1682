package io.kvrouter.loadtest.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/**
 * The figures published with the Mooncake traces (listed in the bundled traces' README, {@code
 * load-tests/src/main/resources/io/kvrouter/loadtest/traces/README.md}), reproduced at block level.
 */
class PrefixCacheBoundTest {

  private static final double TOLERANCE = 0.002;

  @Test
  void conversationTrace_singleUnlimitedCache_hits0_3664OfBlocks() {
    HitRates rates = PrefixCacheBound.singleCache(Traces.conversation());
    System.out.println("conversation single cache: " + rates);
    assertThat(rates.requests()).isEqualTo(12_031);
    assertThat(rates.blockHitRate()).isCloseTo(0.3664, within(TOLERANCE));
    // token-weighted: full matched blocks of 512 tokens, capped to the prompt length
    assertThat(rates.tokenHitRate()).isCloseTo(0.3736, within(0.0005));
  }

  @Test
  void conversationTrace_roundRobinOver4_hits0_192() {
    HitRates rates = PrefixCacheBound.roundRobin(Traces.conversation(), 4);
    System.out.println("conversation round robin 4: " + rates);
    assertThat(rates.blockHitRate()).isCloseTo(0.192, within(TOLERANCE));
  }

  @Test
  void conversationTrace_roundRobinOver8_hits0_136() {
    HitRates rates = PrefixCacheBound.roundRobin(Traces.conversation(), 8);
    System.out.println("conversation round robin 8: " + rates);
    assertThat(rates.blockHitRate()).isCloseTo(0.136, within(TOLERANCE));
  }

  @Test
  void conversationTrace_roundRobinOver16_hits0_099() {
    HitRates rates = PrefixCacheBound.roundRobin(Traces.conversation(), 16);
    System.out.println("conversation round robin 16: " + rates);
    assertThat(rates.blockHitRate()).isCloseTo(0.099, within(TOLERANCE));
  }

  @Test
  void syntheticTrace_singleUnlimitedCache_hits0_640() {
    HitRates rates = PrefixCacheBound.singleCache(Traces.synthetic());
    System.out.println("synthetic single cache: " + rates);
    assertThat(rates.requests()).isEqualTo(3_993);
    assertThat(rates.blockHitRate()).isCloseTo(0.640, within(TOLERANCE));
    assertThat(rates.tokenHitRate()).isCloseTo(0.6512, within(0.0005));
  }

  @Test
  void boundedCaches_hitLessThanUnlimited_andNeverHoldMoreThanCapacity() {
    Workload trace = Traces.conversation();
    HitRates unlimited = PrefixCacheBound.roundRobin(trace, 8);
    HitRates bounded = PrefixCacheBound.roundRobin(trace, 8, 2_000);
    System.out.println("conversation round robin 8, 2000 blocks each: " + bounded);
    assertThat(bounded.blockHitRate()).isLessThan(unlimited.blockHitRate()).isGreaterThan(0.0);
    assertThat(bounded.totalBlocks()).isEqualTo(unlimited.totalBlocks());
  }
}

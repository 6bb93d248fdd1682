package io.kvrouter.loadtest.workload;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class SpreadOverTicksTest {

  private static long[] arrivals(Workload w) {
    long[] a = new long[w.size()];
    for (int i = 0; i < a.length; i++) {
      a[i] = w.get(i).arrivalMicros();
    }
    Arrays.sort(a);
    return a;
  }

  /**
   * The conversation trace records time in ticks about 3 s apart: replayed as recorded, each tick
   * is a burst at one instant. Spread, every request lands inside its own tick (between its
   * timestamp and the next distinct one), nearly every instant is distinct, and the same seed gives
   * the same arrivals.
   */
  @Test
  void quantisedArrivals_areSpreadInsideTheirTick_reproduciblyBySeed() {
    Workload recorded = Workloads.bundled(Workloads.MOONCAKE_CONVERSATION, 0L).limit(600);
    Workload spread = recorded.spreadOverTicks(7);
    long[] before = arrivals(recorded);
    long[] after = arrivals(spread);
    TreeSet<Long> ticks = new TreeSet<>();
    for (long t : before) {
      ticks.add(t);
    }
    assertThat(ticks.size()).isLessThan(before.length / 3);
    assertThat(after).hasSameSizeAs(before);
    for (int i = 0; i < after.length; i++) {
      assertThat(after[i]).isGreaterThanOrEqualTo(before[i]);
      Long next = ticks.higher(before[i]);
      if (next != null) {
        assertThat(after[i]).isLessThan(next);
      }
    }
    assertThat(Arrays.stream(after).distinct().count()).isGreaterThan(after.length * 9L / 10);
    assertThat(arrivals(recorded.spreadOverTicks(7))).isEqualTo(after);
    assertThat(arrivals(recorded.spreadOverTicks(8))).isNotEqualTo(after);
  }
}

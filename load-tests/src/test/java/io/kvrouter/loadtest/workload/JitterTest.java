package io.kvrouter.loadtest.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.IdentityHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JitterTest {

  private static final long MAX = 2_000;

  /**
   * The conversation trace delivers about ten requests at each 3 s tick, so a jitter reorders
   * requests within their tick. Each request arrives later by less than the bound, the workload
   * stays in arrival order and numbered 0..n-1, the same seed draws the same arrivals and another
   * seed others.
   */
  @Test
  void everyArrival_movesLaterByLessThanTheBound_sortedAndReproduciblyBySeed() {
    Workload recorded = Workloads.bundled(Workloads.MOONCAKE_CONVERSATION, 0L).limit(500);
    Workload jittered = recorded.jitter(3, MAX);
    assertThat(jittered.size()).isEqualTo(recorded.size());
    // A jittered request carries its recorded self's prompt: that pairs them.
    Map<PromptTokens, Long> before = new IdentityHashMap<>();
    for (WorkloadRequest r : recorded.requests()) {
      before.put(r.prompt(), r.arrivalMicros());
    }
    assertThat(before).hasSize(recorded.size());
    int moved = 0;
    for (int i = 0; i < jittered.size(); i++) {
      WorkloadRequest r = jittered.get(i);
      assertThat(r.index()).isEqualTo(i);
      if (i > 0) {
        assertThat(r.arrivalMicros()).isGreaterThanOrEqualTo(jittered.get(i - 1).arrivalMicros());
      }
      long was = before.get(r.prompt());
      assertThat(r.arrivalMicros()).isBetween(was, was + MAX - 1);
      moved += r.arrivalMicros() != was ? 1 : 0;
    }
    assertThat(moved).isGreaterThan(jittered.size() * 9 / 10);
    assertThat(arrivals(recorded.jitter(3, MAX))).isEqualTo(arrivals(jittered));
    assertThat(arrivals(recorded.jitter(4, MAX))).isNotEqualTo(arrivals(jittered));
  }

  @Test
  void noJitter_isTheSameWorkload_andANegativeBoundIsRefused() {
    Workload w = Workloads.bundled(Workloads.MOONCAKE_SYNTHETIC, 0L).limit(10);
    assertThat(w.jitter(1, 0)).isSameAs(w);
    assertThatThrownBy(() -> w.jitter(1, -1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(">= 0");
  }

  private static long[] arrivals(Workload w) {
    return w.stream().mapToLong(WorkloadRequest::arrivalMicros).toArray();
  }
}

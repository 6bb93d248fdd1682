package io.kvrouter.tracker.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SharedTimingsTest {

  private static final EngineTiming OWN = new EngineTiming(10, 10, 1, 1);
  private static final EngineTiming A = new EngineTiming(20, 10, 1, 1);
  private static final EngineTiming C = new EngineTiming(30, 10, 1, 1);

  @Test
  void everyRouterDecidesWithTheModelOfTheFirstRouterById_heardWithinItsHorizon() {
    SharedTimings timings = new SharedTimings();
    assertThat(timings.leader("b", OWN, 1_000)).as("no peer heard").isEqualTo(OWN);
    timings.heard("c", C, 1_000, 500);
    assertThat(timings.leader("b", OWN, 1_000)).as("b sorts before c").isEqualTo(OWN);
    timings.heard("a", A, 1_000, 500);
    assertThat(timings.leader("b", OWN, 1_400)).isEqualTo(A);
    assertThat(timings.leader("d", OWN, 1_400)).isEqualTo(A);
    timings.heard("c", C, 1_400, 500);
    assertThat(timings.leader("d", OWN, 1_501)).as("a silent too long").isEqualTo(C);
    assertThat(timings.leader("b", OWN, 1_501)).isEqualTo(OWN);
  }
}

package io.kvrouter.tracker.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DecisionHoldTest {

  @Test
  void shortPrefills_decideAtOnce_longerOnesWaitOneStepPerDoubling_upToTheLastClass() {
    assertThat(DecisionHold.millis(399, 400, 3, 1.2, 5, 100)).isZero();
    assertThat(DecisionHold.millis(400, 400, 3, 1.2, 5, 100)).isEqualTo(6);
    assertThat(DecisionHold.millis(799, 400, 3, 1.2, 5, 100)).isEqualTo(6);
    assertThat(DecisionHold.millis(800, 400, 3, 1.2, 5, 100)).isEqualTo(12);
    assertThat(DecisionHold.millis(1600, 400, 3, 1.2, 5, 100)).isEqualTo(18);
    assertThat(DecisionHold.millis(60_000, 400, 3, 1.2, 5, 100)).isEqualTo(18);
  }

  @Test
  void theWaitScalesWithTheDelay_upToItsMaximum_andIsOffAtZero() {
    assertThat(DecisionHold.millis(1000, 400, 3, 1.2, 1000, 100)).isEqualTo(100);
    assertThat(DecisionHold.millis(1000, 400, 3, 1.2, 50, 1000)).isEqualTo(120);
    assertThat(DecisionHold.millis(1000, 0, 3, 1.2, 5, 100)).isZero();
    assertThat(DecisionHold.millis(1000, 400, 0, 1.2, 5, 100)).isZero();
    assertThat(DecisionHold.millis(Double.NaN, 400, 3, 1.2, 5, 100)).isZero();
  }
}

package io.kvrouter.tracker.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class RecentWorkTest {

  private static final EngineTiming T = EngineTiming.MOCKER;
  private static final int[] TWO = {0, 1};
  private static final double[] NONE = {0, 0};

  /**
   * 8,192 tokens on replica 0 and none on replica 1 within the same instant, half-life 1 s: the
   * excess is 4,096 tokens (62.2 ms of compute), the utilisation 0.01518 · 8,192 · ln 2 / 1,000 =
   * 0.0862, so the charge is 62.2 · 0.0862 / 0.9138 = 5.87 ms; the replica under the mean is
   * charged nothing.
   */
  @Test
  void charge_isTheExcessComputeTimesTheQueueingFactorOfTheRate() {
    RecentWork w = new RecentWork(1_000);
    w.add(0, 8_192, 0);
    double[] c = w.charges(T, TWO, NONE, 0);
    double rho = T.perKiloToken() * 8.192 * Math.log(2) / 1_000;
    assertThat(c[0]).isCloseTo(T.perKiloToken() * 4.096 * rho / (1 - rho), within(1e-9));
    assertThat(c[0]).isCloseTo(5.87, within(0.01));
    assertThat(c[1]).isZero();
  }

  /**
   * Tokens written and still queued are a queue, not a rate: the decision prices the queue as such,
   * so a burst written at one instant is charged nothing until it has been computed.
   */
  @Test
  void writtenButStillQueued_isChargedNothing() {
    RecentWork w = new RecentWork(1_000);
    w.add(0, 8_192, 0);
    assertThat(w.charges(T, TWO, new double[] {8_192, 0}, 0)).containsExactly(0, 0);
    assertThat(w.charges(T, TWO, new double[] {4_096, 0}, 0)[0]).isPositive();
  }

  /** Balanced replicas owe nothing, however busy; nothing written, nothing owed. */
  @Test
  void balanced_orIdle_isChargedNothing() {
    RecentWork w = new RecentWork(1_000);
    assertThat(w.charges(T, TWO, NONE, 0)).containsExactly(0, 0);
    w.add(0, 50_000, 0);
    w.add(1, 50_000, 0);
    assertThat(w.charges(T, TWO, NONE, 0)).containsExactly(0, 0);
  }

  /**
   * Ten times the rate is charged over fifty times more (the excess times the queueing factor: the
   * square of the over-fed replica's rate, and more as it nears saturation); at the highest
   * utilisation believed (0.9) the charge stays finite.
   */
  @Test
  void charge_growsWithTheRate_andStaysFinite() {
    assertThat(chargeOnZero(81_920, 0)).isGreaterThan(50 * chargeOnZero(8_192, 0));
    assertThat(chargeOnZero(1e9, 0)).isCloseTo(T.perKiloToken() * 1e9 / 2 / 1e3 * 9, within(1e-3));
  }

  /** A write fades with the half-life: one half-life later it counts half. */
  @Test
  void writes_fadeWithTheHalfLife() {
    assertThat(chargeOnZero(8_192, 1_000)).isCloseTo(chargeOnZero(4_096, 0), within(1e-9));
  }

  /** Replica 0's charge {@code atMillis} after {@code tokens} were written to it, half-life 1 s. */
  private static double chargeOnZero(double tokens, long atMillis) {
    RecentWork w = new RecentWork(1_000);
    w.add(0, tokens, 0);
    return w.charges(T, TWO, NONE, atMillis)[0];
  }
}

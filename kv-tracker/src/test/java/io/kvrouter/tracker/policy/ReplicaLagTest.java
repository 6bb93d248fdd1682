package io.kvrouter.tracker.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class ReplicaLagTest {

  @Test
  void chargesOnlyTheRunningLagAboveTheFloor() {
    ReplicaLag lag = new ReplicaLag(50, 1000, 0);
    lag.observed(2, 120, 20, 0); // 100 late: the mean is 0.3 × 100 = 30, under the floor
    assertThat(lag.charge(2, 0)).isZero();
    lag.observed(2, 520, 20, 0); // 500 late: 30 + 0.3 × (500 − 30) = 171
    assertThat(lag.charge(2, 0)).isCloseTo(121, within(1e-9));
    assertThat(lag.charge(1, 0)).as("a replica never observed").isZero();
    assertThat(lag.charge(7, 0)).as("beyond the arrays").isZero();
  }

  @Test
  void earlyFirstTokensPullTheLagBackDown() {
    ReplicaLag lag = new ReplicaLag(50, 1000, 0);
    lag.observed(0, 1_020, 20, 0); // 300
    lag.observed(0, 0, 100, 0); // 100 early: 300 + 0.3 × (−100 − 300) = 180
    assertThat(lag.charge(0, 0)).isCloseTo(130, within(1e-9));
  }

  @Test
  void halvesEveryHalfLifeWithoutNews_andForgetsAReplicaThatLeft() {
    ReplicaLag lag = new ReplicaLag(0, 1000, 0);
    lag.observed(0, 1_000, 0, 0); // 300
    assertThat(lag.charge(0, 1000)).isCloseTo(150, within(1e-9));
    assertThat(lag.charge(0, 3000)).isCloseTo(37.5, within(1e-9));
    lag.observed(0, 37.5 + 0, 0, 3000); // news at 37.5 late: the mean stays 37.5
    assertThat(lag.charge(0, 3000)).isCloseTo(37.5, within(1e-9));
    lag.forget(0);
    assertThat(lag.charge(0, 3000)).isZero();
  }

  @Test
  void aHalfLifeOfZero_turnsItOff() {
    ReplicaLag lag = new ReplicaLag(0, 0, 0);
    lag.observed(0, 5_000, 0, 0);
    assertThat(lag.charge(0, 0)).isZero();
  }

  @Test
  void theFirstFirstTokensFromAReplica_areWarmupAndNotCounted_untilItLeavesAndComesBack() {
    ReplicaLag lag = new ReplicaLag(50, 1000, 2);
    lag.observed(3, 1_000, 0, 0); // a cold engine's first answers: 1 s late
    lag.observed(3, 1_000, 0, 0);
    assertThat(lag.charge(3, 0)).as("warm-up").isZero();
    lag.observed(3, 1_000, 0, 0); // the third counts: 0.3 × 1000 = 300
    assertThat(lag.charge(3, 0)).isCloseTo(250, within(1e-9));
    lag.forget(3);
    lag.observed(3, 1_000, 0, 0); // back, and warming up again
    assertThat(lag.charge(3, 0)).isZero();
    lag.observed(40, 1_000, 0, 0); // beyond the arrays: warming up too
    assertThat(lag.charge(40, 0)).isZero();
  }
}

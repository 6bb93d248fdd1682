package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A macro pass is cut at the first pass boundary at or after an arrival; one pass never is. */
class LabPassClockTest {

  @Test
  void anArrivalDuringAMacroPass_cutsItAtTheNextPassBoundary() {
    LabPassClock clock = new LabPassClock();
    assertThat(clock.startMacro(1_000, 10, 100)).isEqualTo(2_000);
    assertThat(clock.interrupt(1_250)).isTrue();
    assertThat(clock.end()).isEqualTo(1_300);
    assertThat(clock.passes()).isEqualTo(3);
    assertThat(clock.interrupt(1_000)).as("at the start: still the first pass").isTrue();
    assertThat(clock.end()).isEqualTo(1_100);
    assertThat(clock.passes()).isEqualTo(1);
  }

  @Test
  void anArrivalInTheLastPass_orAfterTheEnd_orDuringOnePass_changesNothing() {
    LabPassClock clock = new LabPassClock();
    clock.startMacro(0, 4, 100);
    assertThat(clock.interrupt(350)).isFalse();
    assertThat(clock.interrupt(400)).isFalse();
    assertThat(clock.end()).isEqualTo(400);
    assertThat(clock.startOne(500, 0)).as("a pass takes at least 1 µs").isEqualTo(501);
    assertThat(clock.interrupt(500)).isFalse();
    clock.stop();
    assertThat(clock.busy()).isFalse();
    assertThat(clock.interrupt(100)).isFalse();
  }
}

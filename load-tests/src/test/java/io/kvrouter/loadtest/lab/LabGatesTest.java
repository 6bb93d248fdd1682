package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The lab's gates follow the ingress's retry rule: a refusing replica is counted, not excluded. */
class LabGatesTest {

  static LabGates.Attempt attempt(int replica, int expected, Map<String, Integer> counts) {
    return new LabGates.Attempt(0, "q0", 0, replica, expected, true, Set.of(), counts, 0);
  }

  @Test
  void aRefusal_reportsWhatTheGateHolds_andTheRetryCountsItThere() {
    LabGates gates = new LabGates();
    assertThat(gates.admit(new LabGates.Attempt(1, "a", 0, 3, 0, true, Set.of(), Map.of(), 0)))
        .as("admitted")
        .isEqualTo(-1);
    assertThat(gates.admit(new LabGates.Attempt(2, "b", 1, 3, 1, true, Set.of(), Map.of(), 0)))
        .isEqualTo(-1);
    // A router that saw nobody there is turned away: the gate holds two.
    LabGates.Attempt stale = attempt(3, 0, Map.of("r3", 1));
    int held = gates.admit(stale);
    assertThat(held).isEqualTo(2);
    assertThat(stale.gateCountsNext("r3", held)).isEqualTo(Map.of("r3", 2));
    assertThat(stale.gateCountsNext("r4", 5)).isEqualTo(Map.of("r3", 1, "r4", 5));
    assertThat(stale.excluded()).as("the refusing replica stays a candidate").isEmpty();
    gates.leave(3, "a");
    assertThat(gates.admit(attempt(3, 1, Map.of()))).isEqualTo(-1);
  }

  @Test
  void admissionIsForced_onlyAfterRoundsTurnAwaysPerCandidate() {
    assertThat(LabGates.forced(LabGates.ROUNDS * 4 - 1, 4)).isFalse();
    assertThat(LabGates.forced(LabGates.ROUNDS * 4, 4)).isTrue();
    assertThat(LabGates.forced(LabGates.ROUNDS, 0)).isTrue();
  }
}

package io.kvrouter.ingress.routing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A call's progress through strict mode's gates: a gate that turns it away stays a candidate,
 * counted with what it reported (the highest report wins); a replica gone from the directory stays
 * excluded for the whole call; the admission is forced only after the rounds' worth of turn-aways.
 */
class RouteAttemptTest {

  private static final ReplicaQuery QUERY =
      new ReplicaQuery("q", "m", new int[] {1, 2, 3}, 8, Set.of("caller-excluded"));

  @Test
  void aGateThatTurnsTheRequestAway_staysACandidate_countedWithWhatItHolds() {
    RouteAttempt a = RouteAttempt.first(QUERY);
    assertThat(a.query()).isSameAs(QUERY);
    assertThat(a.gateCounts()).isEmpty();
    RouteAttempt b = a.turnedAway("r1", 2).turnedAway("r2", 1);
    assertThat(b.query().excluded()).containsExactly("caller-excluded");
    assertThat(b.gateCounts()).isEqualTo(Map.of("r1", 2, "r2", 1));
    assertThat(b.turnedAway()).isEqualTo(2);
    assertThat(b.turnedAway("r1", 3).gateCounts()).containsEntry("r1", 3);
    assertThat(b.turnedAway("r1", 1).gateCounts())
        .as("a late, lower report")
        .containsEntry("r1", 2);
  }

  @Test
  void aReplicaGoneFromTheDirectory_staysExcluded_andTheCountsStay() {
    RouteAttempt a = RouteAttempt.first(QUERY).turnedAway("r1", 1).without("gone");
    assertThat(a.query().excluded()).containsExactlyInAnyOrder("caller-excluded", "gone");
    assertThat(a.query().requestId()).isEqualTo("q");
    assertThat(a.gateCounts()).isEqualTo(Map.of("r1", 1));
  }

  @Test
  void forcedOnlyAfterTheRoundsWorthOfTurnAwaysPerCandidate() {
    RouteAttempt a = RouteAttempt.first(QUERY);
    for (int i = 0; i < 3 * 2; i++) {
      assertThat(a.forced(2, 3)).isFalse();
      a = a.turnedAway("r" + (i % 2), i);
    }
    assertThat(a.forced(2, 3)).isTrue();
    assertThat(a.forced(3, 3)).isFalse();
  }
}

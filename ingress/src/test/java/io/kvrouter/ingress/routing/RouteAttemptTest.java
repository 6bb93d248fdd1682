package io.kvrouter.ingress.routing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A call's progress through the gate rounds: a round's rejections are excluded until the last
 * candidate turns it away too, then a new round starts over all of them; a replica gone from the
 * directory stays excluded for the whole call; the last candidate is forced only after the rounds.
 */
class RouteAttemptTest {

  private static final RouteQuery QUERY =
      new RouteQuery("q", "m", new int[] {1, 2, 3}, 8, Set.of("caller-excluded"));

  @Test
  void rejectionsOfARound_areExcludedUntilTheLastCandidateTurnsItAway() {
    RouteAttempt a = RouteAttempt.first(QUERY);
    assertThat(a.query()).isSameAs(QUERY);
    RouteAttempt b = a.turnedAway("r1", false);
    assertThat(b.query().excluded()).containsExactlyInAnyOrder("caller-excluded", "r1");
    assertThat(b.round()).isZero();
    RouteAttempt c = b.turnedAway("r2", true);
    assertThat(c.round()).isEqualTo(1);
    assertThat(c.rejected()).isEmpty();
    assertThat(c.query().excluded()).containsExactly("caller-excluded");
  }

  @Test
  void aReplicaGoneFromTheDirectory_staysExcludedAcrossRounds() {
    RouteAttempt a = RouteAttempt.first(QUERY).without("gone").turnedAway("r1", true);
    assertThat(a.query().excluded()).containsExactlyInAnyOrder("caller-excluded", "gone");
    assertThat(a.original().requestId()).isEqualTo("q");
  }

  @Test
  void onlyTheLastCandidate_afterEveryRound_isForced() {
    RouteAttempt a = RouteAttempt.first(QUERY);
    for (int round = 0; round < 3; round++) {
      assertThat(a.forced(true, 3)).isFalse();
      a = a.turnedAway("r1", true);
    }
    assertThat(a.forced(true, 3)).isTrue();
    assertThat(a.forced(false, 3)).isFalse();
  }
}

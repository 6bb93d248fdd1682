package io.kvrouter.tracker.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class OwnInFlightTest {

  @Test
  void countsReservationsUntilReleased_aMoveCountsOnce_aLeftReplicaCountsNothing() {
    OwnInFlight own = new OwnInFlight();
    own.reserved("a", 2);
    own.reserved("b", 2);
    own.reserved("c", 40); // beyond the initial table
    assertThat(own.on(2)).isEqualTo(2);
    assertThat(own.on(40)).isEqualTo(1);
    own.reserved("b", 3); // the same request placed again elsewhere
    assertThat(own.on(2)).isEqualTo(1);
    assertThat(own.on(3)).isEqualTo(1);
    own.released("a");
    own.released("a"); // twice: no effect
    own.released("unknown");
    assertThat(own.on(2)).isZero();
    own.forget(3);
    own.released("b");
    assertThat(own.on(3)).isZero();
    assertThat(own.on(-1)).isZero();
  }

  @Test
  void releasesThatNeverCome_areBounded_oldestForgottenFirst() {
    OwnInFlight own = new OwnInFlight();
    for (int i = 0; i <= OwnInFlight.MAX_TRACKED; i++) {
      own.reserved("r" + i, 0);
    }
    assertThat(own.on(0)).isEqualTo(OwnInFlight.MAX_TRACKED);
    own.released("r0"); // forgotten already: no effect
    assertThat(own.on(0)).isEqualTo(OwnInFlight.MAX_TRACKED);
    own.released("r1");
    assertThat(own.on(0)).isEqualTo(OwnInFlight.MAX_TRACKED - 1);
  }
}

package io.kvrouter.tracker.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LoadLedgerTest {

  private static LoadLedger ledger() {
    return new LoadLedger(i -> "replica-" + i);
  }

  @Test
  void reserve_countsInFlightAndPrefill_prefillCompleted_movesTokensToDecode_release_returnsAll() {
    LoadLedger l = ledger();
    assertThat(l.reserve("in-1", "r1", 2, 1000, 200, 5_000)).isTrue();
    assertThat(l.inFlight(2)).isEqualTo(1);
    assertThat(l.prefillTokens(2)).isEqualTo(200);
    assertThat(l.activeTokens(2)).isEqualTo(1000);
    assertThat(l.decodeTokens(2)).isZero();

    assertThat(l.prefillCompleted("in-1", "r1")).isTrue();
    assertThat(l.prefillTokens(2)).isZero();
    assertThat(l.decodeTokens(2)).isEqualTo(1000);

    assertThat(l.release("in-1", "r1"))
        .as("the released reservation, past its prefill")
        .isEqualTo(new Reservation("in-1", "r1", 2, 1000, 200, true, 5_000));
    assertThat(l.inFlight(2)).isZero();
    assertThat(l.decodeTokens(2)).isZero();
    assertThat(l.activeTokens(2)).isZero();
  }

  @Test
  void lifecycleCalls_areIdempotent() {
    LoadLedger l = ledger();
    l.reserve("in-1", "r1", 0, 100, 100, 5_000);
    assertThat(l.reserve("in-1", "r1", 0, 100, 100, 5_000)).isFalse();
    l.prefillCompleted("in-1", "r1");
    assertThat(l.prefillCompleted("in-1", "r1")).isFalse();
    l.release("in-1", "r1");
    assertThat(l.release("in-1", "r1")).isNull();
    assertThat(l.inFlight(0)).isZero();
    assertThat(l.decodeTokens(0)).isZero();
    assertThat(l.prefillTokens(0)).isZero();
  }

  @Test
  void sameRequestIdFromTwoOrigins_areTwoReservations() {
    LoadLedger l = ledger();
    l.reserve("in-1", "r1", 0, 100, 100, 5_000);
    l.reserve("in-2", "r1", 0, 100, 100, 5_000);
    assertThat(l.inFlight(0)).isEqualTo(2);
  }

  @Test
  void leaseExpiry_dropsUnreleasedReservationsOnly() {
    LoadLedger l = ledger();
    l.reserve("in-1", "a", 0, 100, 100, 1_000);
    l.reserve("in-1", "b", 0, 100, 100, 2_000);
    l.release("in-1", "a");
    assertThat(l.expire(999)).isEmpty();
    assertThat(l.expire(1_000)).isEmpty(); // "a" was released already
    assertThat(l.expire(2_000)).extracting(Reservation::requestId).containsExactly("b");
    assertThat(l.inFlight(0)).isZero();
    assertThat(l.release("in-1", "b")).isNull();
  }

  @Test
  void dropOrigin_removesOnlyThatIngressesReservations() {
    LoadLedger l = ledger();
    l.reserve("in-1", "a", 0, 100, 100, 1_000);
    l.reserve("in-2", "b", 0, 50, 50, 1_000);
    assertThat(l.dropOrigin("in-1")).isEqualTo(1);
    assertThat(l.inFlight(0)).isEqualTo(1);
    assertThat(l.prefillTokens(0)).isEqualTo(50);
    assertThat(l.digest("in-1")).isEqualTo(ReservationDigest.EMPTY);
  }

  @Test
  void originDigest_isOrderIndependent_andSeesPhaseChanges() {
    LoadLedger x = ledger();
    LoadLedger y = ledger();
    x.reserve("in-1", "a", 0, 100, 10, 1_000);
    x.reserve("in-1", "b", 1, 200, 20, 1_000);
    y.reserve("in-1", "b", 1, 200, 20, 1_000);
    y.reserve("in-1", "a", 0, 100, 10, 1_000);
    assertThat(x.digest("in-1")).isEqualTo(y.digest("in-1"));
    x.prefillCompleted("in-1", "a");
    assertThat(x.digest("in-1")).isNotEqualTo(y.digest("in-1"));
    y.prefillCompleted("in-1", "a");
    assertThat(x.digest("in-1")).isEqualTo(y.digest("in-1"));
    x.release("in-1", "a");
    x.release("in-1", "b");
    assertThat(x.digest("in-1")).isEqualTo(ReservationDigest.EMPTY);
  }

  @Test
  void reportedLoad_isKeptPerReplica_andDroppedWithIt() {
    LoadLedger l = ledger();
    l.reportLoad(3, 7, 2, 0.5);
    assertThat(l.running(3)).isEqualTo(7);
    assertThat(l.waiting(3)).isEqualTo(2);
    assertThat(l.kvUsage(3)).isEqualTo(0.5);
    l.reserve("in-1", "a", 3, 100, 100, 1_000);
    l.dropReplica(3);
    assertThat(l.waiting(3)).isZero();
    assertThat(l.inFlight(3)).isZero();
  }
}

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
        .usingRecursiveComparison()
        .isEqualTo(
            new Reservation("in-1", "r1", "replica-2", 2, 1000, 200, true, 5_000, new long[0]));
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
    l.detachReplica(3);
    assertThat(l.waiting(3)).isZero();
    assertThat(l.inFlight(3)).isZero();
  }

  @Test
  void replicaThatLeaves_keepsItsReservationsInTheOriginsDigest_untilTheOriginEndsThem() {
    LoadLedger l = ledger();
    l.reserve("in-1", "a", 3, 100, 40, 1_000);
    l.reserve("in-2", "b", 3, 50, 50, 1_000);
    ReservationDigest before = l.digest("in-1");

    assertThat(l.detachReplica(3)).isEqualTo(2);
    assertThat(l.inFlight(3)).isZero();
    assertThat(l.prefillTokens(3)).isZero();
    assertThat(l.digest("in-1")).as("the origin's digest is its stream's").isEqualTo(before);
    assertThat(l.openReservations()).isEqualTo(2);

    assertThat(l.prefillCompleted("in-1", "a")).isTrue();
    assertThat(l.release("in-2", "b")).isNotNull();
    assertThat(l.attachReplica("replica-3", 5)).as("back at another index").isEqualTo(1);
    assertThat(l.inFlight(5)).isEqualTo(1);
    assertThat(l.decodeTokens(5)).isEqualTo(100);
    assertThat(l.prefillTokens(5)).isZero();
    assertThat(l.release("in-1", "a")).isNotNull();
    assertThat(l.inFlight(5)).isZero();
    assertThat(l.decodeTokens(5)).isZero();
    assertThat(l.digest("in-1")).isEqualTo(ReservationDigest.EMPTY);
  }

  @Test
  void reservationOnAnUnknownReplica_isHeldDetached_andCountsOnceItsReplicaIsKnown() {
    LoadLedger known = ledger();
    LoadLedger unknown = ledger();
    known.reserve("in-1", "a", "replica-2", 2, 100, 60, 1_000, new long[0]);
    unknown.reserve("in-1", "a", "replica-2", Reservation.DETACHED, 100, 60, 1_000, new long[0]);
    assertThat(unknown.digest("in-1")).isEqualTo(known.digest("in-1"));
    assertThat(unknown.inFlight(2)).isZero();

    unknown.attachReplica("replica-2", 2);
    assertThat(unknown.inFlight(2)).isEqualTo(1);
    assertThat(unknown.prefillTokens(2)).isEqualTo(60);
    assertThat(unknown.attachReplica("replica-2", 2)).as("attached once").isZero();
  }

  @Test
  void leaseQueue_staysProportionalToOpenReservations_whateverTheRequestRate() {
    LoadLedger l = ledger();
    for (int i = 0; i < 100_000; i++) {
      l.reserve("in-1", "q" + i, 0, 10, 10, 1_000_000 + i);
      l.release("in-1", "q" + i);
    }
    assertThat(l.openReservations()).isZero();
    assertThat(l.leaseEntries()).isLessThanOrEqualTo(1024 + 2);
    l.reserve("in-2", "peer", "replica-0", 0, 10, 10, LoadLedger.NO_LEASE, new long[0]);
    assertThat(l.expire(Long.MAX_VALUE - 1)).isEmpty();
    assertThat(l.openReservations()).isOne();
  }
}

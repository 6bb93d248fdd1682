package io.kvrouter.ingress.traffic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvrouter.ingress.program.ProgramLedger;
import io.kvrouter.ingress.proxy.AdmissionQueue;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The router queue's program order (Autellix's program-level least attained service, ranked by the
 * {@link ProgramLedger}) inside the priority and tenant rules, which still hold.
 */
class ProgramRankTest {

  final AtomicLong now = new AtomicLong();
  final ProgramLedger ledger = new ProgramLedger(10_000, 1000, 60_000, now::get);

  @Test
  void aProgramInMidSession_goesAheadOfANewOne_andTheLeastServedFirst() {
    ledger.replied("long", 8_000, true);
    ledger.replied("short", 500, true);
    FairQueue<String> q = new FairQueue<>(100);
    q.add("new-1", 0, "t", 10, 1, ledger.rank("new-1"));
    q.add("anonymous", 0, "t", 10, 1, ledger.rank(null));
    q.add("long", 0, "t", 10, 1, ledger.rank("long"));
    q.add("short", 0, "t", 10, 1, ledger.rank("short"));

    assertThat(FairQueueTest.serve(q, 4)).containsExactly("short", "long", "new-1", "anonymous");
  }

  @Test
  void theRouterQueue_givesTheTurnToTheProgramInMidSession_thoughItArrivedLater() {
    AdmissionQueue queue =
        new AdmissionQueue(8, Duration.ofSeconds(10), Duration.ofSeconds(10), 64);
    AdmissionQueue.Ticket fresh = queue.enter("m", 0, "t", 100, 1, ledger.rank("fresh"));
    ledger.replied("mid", 500, true);
    AdmissionQueue.Ticket mid = queue.enter("m", 0, "t", 100, 1, ledger.rank("mid"));

    assertThat(queue.isNext(mid)).isTrue();
    assertThat(queue.isNext(fresh)).isFalse();
    queue.placed(mid);
    assertThat(queue.isNext(fresh)).isTrue();
  }

  @Test
  void inAgeOrder_theProgramThatStartedFirstGoesFirst_howeverMuchItWasServed_andNewOnesLast() {
    ProgramLedger byAge = new ProgramLedger(10_000, 1000, 60_000, now::get, true);
    now.set(1_000);
    byAge.replied("old", 50_000, true);
    now.set(2_000);
    byAge.replied("young", 500, true);
    byAge.replied("old", 50_000, true); // more service does not move it back
    now.set(3_000);
    FairQueue<String> q = new FairQueue<>(100);
    q.add("new", 0, "t", 10, 1, byAge.rank("new"));
    q.add("young", 0, "t", 10, 1, byAge.rank("young"));
    q.add("old", 0, "t", 10, 1, byAge.rank("old"));

    assertThat(FairQueueTest.serve(q, 3)).containsExactly("old", "young", "new");
  }

  @Test
  void aProgramServedMoreThanANewOneRanksAt_goesBehindNewOnes() {
    ledger.replied("huge", 25_000, true);
    FairQueue<String> q = new FairQueue<>(100);
    q.add("huge", 0, "t", 10, 1, ledger.rank("huge"));
    q.add("new", 0, "t", 10, 1, ledger.rank("new"));

    assertThat(FairQueueTest.serve(q, 2)).containsExactly("new", "huge");
  }

  @Test
  void priorityStillComesFirst_andTenantsStillShare() {
    ledger.replied("mid", 100, true);
    FairQueue<String> q = new FairQueue<>(100);
    q.add("urgent-new", -1, "a", 100, 1, ledger.rank("urgent-new"));
    for (int i = 0; i < 5; i++) {
      q.add("a-mid" + i, 0, "a", 100, 1, ledger.rank("mid"));
      q.add("b-new" + i, 0, "b", 100, 1, ledger.rank("b" + i));
    }

    List<String> order = FairQueueTest.serve(q, 11);

    assertThat(order.get(0))
        .as("a more pressing priority, new program or not")
        .isEqualTo("urgent-new");
    assertThat(order.subList(1, 11))
        .as("tenant b's new programs still get their turns between a's continuing ones")
        .containsExactly(
            "a-mid0", "b-new0", "a-mid1", "b-new1", "a-mid2", "b-new2", "a-mid3", "b-new3",
            "a-mid4", "b-new4");
  }

  @Test
  void theVictimToShed_isTheLeastDeservingOfTheLargestTenant() {
    ledger.replied("mid", 100, true);
    FairQueue<String> q = new FairQueue<>(100);
    q.add("new", 0, "t", 10, 1, ledger.rank("new"));
    q.add("mid", 0, "t", 10, 1, ledger.rank("mid"));

    assertThat(q.victim().value()).isEqualTo("new");
  }

  @Test
  void aContinuingTurn_isKnownAsSuch_untilTheProgramRepliesWithoutAToolCall() {
    assertThat(ledger.arrived("p").continuing()).isFalse();
    ledger.replied("p", 100, true);
    assertThat(ledger.arrived("p").continuing()).isTrue();
    assertThat(ledger.arrived("p").warmed()).isFalse();
    ledger.warmed("p");
    assertThat(ledger.arrived("p").warmed()).isTrue();
    ledger.replied("p", 100, false);
    assertThat(ledger.arrived("p").continuing()).isFalse();
  }

  @Test
  void pastItsBound_theLedgerForgetsTheLeastRecentlySeen() {
    ProgramLedger small = new ProgramLedger(10_000, 10, 60_000, now::get);
    for (int i = 0; i < 11; i++) {
      now.incrementAndGet();
      small.replied("p" + i, 100, false);
    }
    assertThat(small.size()).isLessThanOrEqualTo(10);
    assertThat(small.rank("p10")).as("the newest is kept").isEqualTo(100);
    assertThat(small.rank("p0")).as("the oldest is forgotten").isEqualTo(10_000);
  }

  @Test
  void aRankThatIsNotFinite_isRefused() {
    FairQueue<String> q = new FairQueue<>(100);
    assertThatThrownBy(() -> q.add("x", 0, "t", 10, 1, Double.NaN))
        .isInstanceOf(IllegalArgumentException.class);
  }
}

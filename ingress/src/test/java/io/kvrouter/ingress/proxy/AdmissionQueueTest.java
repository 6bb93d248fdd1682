package io.kvrouter.ingress.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.ingress.proxy.AdmissionQueue.Ticket;
import io.kvrouter.ingress.proxy.AdmissionQueue.Wake;
import io.kvrouter.ingress.traffic.PeerQueues;
import io.kvrouter.ingress.traffic.QueueHead;
import io.kvrouter.ingress.traffic.QueueState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class AdmissionQueueTest {

  /** A queue whose recheck never fires within a test: only turns and sheds wake a waiter. */
  static AdmissionQueue queue(int capacity) {
    return new AdmissionQueue(capacity, Duration.ofMinutes(1), Duration.ofMinutes(10), 100);
  }

  static CompletableFuture<Wake> await(AdmissionQueue q, Ticket t) {
    return q.await(t, Duration.ofMinutes(1)).toCompletableFuture();
  }

  static Wake now(CompletableFuture<Wake> f) throws Exception {
    return f.get(5, TimeUnit.SECONDS);
  }

  @Test
  void aRelease_givesTheTurnToTheMostPressingWaiter_andEachPlacementToTheNext() throws Exception {
    AdmissionQueue q = queue(10);
    Ticket low = q.enter("m", 10, "t", 10, 1);
    Ticket mid = q.enter("m", 5, "t", 10, 1);
    Ticket high = q.enter("m", 0, "t", 10, 1);
    CompletableFuture<Wake> lowWake = await(q, low);
    CompletableFuture<Wake> midWake = await(q, mid);
    CompletableFuture<Wake> highWake = await(q, high);

    q.signal();
    assertThat(now(highWake)).isEqualTo(Wake.TURN);
    assertThat(midWake).isNotDone();
    assertThat(q.isNext(high)).isTrue();

    q.placed(high);
    assertThat(now(midWake)).as("a placement passes the turn on").isEqualTo(Wake.TURN);
    assertThat(lowWake).isNotDone();
    assertThat(q.size()).isEqualTo(2);
  }

  @Test
  void theTurn_goesToTheTenantRunningFewer_asPlacementsAndReleasesAreTold() throws Exception {
    AdmissionQueue q = queue(10);
    q.started("n1", "m", "noisy");
    q.started("n2", "m", "noisy");
    Ticket noisy = q.enter("m", 0, "noisy", 10, 1);
    Ticket quiet = q.enter("m", 0, "quiet", 10, 1);
    assertThat(q.isNext(quiet)).as("noisy runs two, quiet none").isTrue();
    assertThat(q.isNext(noisy)).isFalse();

    q.started("q1", "m", "quiet");
    q.placed(quiet);
    CompletableFuture<Wake> noisyWake = await(q, noisy);
    q.released("n1");
    assertThat(now(noisyWake)).as("a release wakes the head").isEqualTo(Wake.TURN);
    Ticket quiet2 = q.enter("m", 0, "quiet", 10, 1);
    assertThat(q.isNext(noisy)).as("one each: by tokens, noisy's turn").isTrue();
    q.released("n2");
    assertThat(q.isNext(noisy)).as("noisy runs none now").isTrue();
    q.started("n3", "m", "noisy");
    q.started("n4", "m", "noisy");
    assertThat(q.isNext(quiet2)).as("noisy runs two, quiet one").isTrue();

    q.leave(noisy);
    q.leave(quiet2);
    for (String id : List.of("q1", "n3", "n4")) {
      q.released(id);
    }
    q.released("never-started"); // only a wake-up
    Ticket again = q.enter("m", 0, "noisy", 10, 1);
    assertThat(q.isNext(again)).isTrue();
  }

  @Test
  void aTurnGivenWhileTheWaiterIsAsking_isNotLost() throws Exception {
    AdmissionQueue q = queue(10);
    Ticket t = q.enter("m", 0, "t", 10, 1);
    q.signal(); // t is not awaiting yet: it is asking the router
    assertThat(now(await(q, t))).isEqualTo(Wake.TURN);
  }

  @Test
  void aFullQueue_shedsTheLeastPressing_forAMorePressingNewcomer_andRefusesAnEqualOne()
      throws Exception {
    AdmissionQueue q = queue(2);
    Ticket a = q.enter("m", 10, "t", 10, 1);
    Ticket b = q.enter("m", 10, "t", 10, 1);
    CompletableFuture<Wake> aWake = await(q, a);
    CompletableFuture<Wake> bWake = await(q, b);

    assertThat(q.enter("m", 10, "t", 10, 1)).as("same priority, same tenant").isNull();
    Ticket urgent = q.enter("m", 0, "t", 10, 1);
    assertThat(urgent).isNotNull();
    assertThat(now(bWake)).as("the newest of the least pressing").isEqualTo(Wake.SHED);
    assertThat(aWake).isNotDone();
    assertThat(q.size()).isEqualTo(2);
    assertThat(q.isNext(urgent)).isTrue();
  }

  @Test
  void aFullQueue_shedsFromTheTenantHoldingMostPlaces_forATenantWithFewer() throws Exception {
    AdmissionQueue q = queue(3);
    Ticket n1 = q.enter("m", 0, "noisy", 10, 1);
    Ticket n2 = q.enter("m", 0, "noisy", 10, 1);
    Ticket n3 = q.enter("m", 0, "noisy", 10, 1);
    CompletableFuture<Wake> n3Wake = await(q, n3);
    Ticket quiet = q.enter("m", 0, "quiet", 10, 1);
    assertThat(quiet).isNotNull();
    assertThat(now(n3Wake)).isEqualTo(Wake.SHED);
    assertThat(q.enter("m", 0, "quiet", 10, 1))
        .as("2 noisy against 1 quiet: a second quiet one would not be fairer")
        .isNull();
    assertThat(n1).isNotNull();
    assertThat(n2).isNotNull();
  }

  @Test
  void aShedTicketThatIsAsking_learnsItWhenItComesBack() throws Exception {
    AdmissionQueue q = queue(1);
    Ticket low = q.enter("m", 10, "t", 10, 1);
    assertThat(q.enter("m", 0, "t", 10, 1)).isNotNull();
    assertThat(now(await(q, low))).isEqualTo(Wake.SHED);
  }

  @Test
  void waitersOfOneModel_doNotHoldBackAnother() {
    AdmissionQueue q = queue(10);
    Ticket t = q.enter("busy-model", 0, "t", 10, 1);
    assertThat(q.hasWaiters("busy-model")).isTrue();
    assertThat(q.hasWaiters("free-model")).isFalse();
    q.leave(t);
    assertThat(q.hasWaiters("busy-model")).isFalse();
    assertThat(q.size()).isZero();
  }

  @Test
  void aTurnYields_whileAnotherIngressWaitsWithAMorePressingPriority() throws Exception {
    PeerQueues peers = new PeerQueues(Duration.ofMinutes(1).toNanos());
    List<String> told = new ArrayList<>();
    AdmissionQueue q =
        new AdmissionQueue(
            10,
            Duration.ofMinutes(1),
            Duration.ofMinutes(10),
            100,
            peers,
            state -> told.add(state.model() + "=" + state.priority()),
            0);
    Ticket low = q.enter("m", 10, "t", 10, 1);
    q.enter("m", 3, "t", 10, 1);
    assertThat(told)
        .as("what this ingress waits with, as it changes")
        .containsExactly("m=10", "m=3");

    Ticket mid = q.enter("m", 3, "t", 10, 1);
    CompletableFuture<Wake> lowWake = await(q, low);
    peers.heard(head("other-ingress", 0, Map.of("t", 1.0), Map.of()), System.nanoTime());
    q.signal();
    assertThat(q.isNext(mid)).isFalse();
    assertThat(lowWake).isNotDone();

    peers.heard(head("other-ingress", 5, Map.of("t", 1.0), Map.of()), System.nanoTime());
    assertThat(q.isNext(q.enter("x", 0, "t", 1, 1))).as("other models are not held").isTrue();
    q.signal();
    assertThat(lowWake).as("the head (priority 3) goes first; 5 is not more pressing").isNotDone();

    peers.heard(head("other-ingress", null, Map.of(), Map.of()), System.nanoTime());
    told.clear();
    q.leave(low);
    assertThat(told).isEmpty();
  }

  @Test
  void whatAnotherIngressToldExpires_unlessToldAgain() {
    PeerQueues peers = new PeerQueues(1_000);
    peers.heard(head("other", 0, Map.of("t", 1.0), Map.of("t", 2)), 0);
    assertThat(peers.ahead("m", 1, 0, t -> 0, 999)).isTrue();
    assertThat(peers.ahead("m", 0, 2, t -> 0, 999)).as("equal is not ahead").isFalse();
    assertThat(peers.running("m", "t", 999)).isEqualTo(2);
    assertThat(peers.ahead("m", 1, 0, t -> 0, 1_001)).isFalse();
    assertThat(peers.running("m", "t", 1_001)).isZero();
  }

  /** What {@code ingress} tells it holds for model "m". */
  static QueueHead head(
      String ingress, Integer priority, Map<String, Double> waiting, Map<String, Integer> running) {
    return new QueueHead(ingress, "m", priority, waiting, running);
  }

  @Test
  void theRecheck_wakesOnlyTheHead_andAWaiterBehindItSleepsUntilItsPatienceRunsOut()
      throws Exception {
    AdmissionQueue q = new AdmissionQueue(10, Duration.ofMinutes(1), Duration.ofMillis(10), 100);
    Ticket first = q.enter("m", 0, "t", 10, 1);
    Ticket second = q.enter("m", 0, "t", 10, 1);
    CompletableFuture<Wake> secondWake = await(q, second);
    for (int i = 0; i < 3; i++) {
      assertThat(now(await(q, first))).as("the head, at each recheck").isEqualTo(Wake.RECHECK);
    }
    assertThat(secondWake).as("three rechecks went by").isNotDone();

    q.leave(first);
    assertThat(now(secondWake)).as("the head left: its turn").isEqualTo(Wake.TURN);
    Ticket third = q.enter("m", 0, "t", 10, 1);
    CompletableFuture<Wake> thirdWake = q.await(third, Duration.ofMillis(1)).toCompletableFuture();
    assertThat(now(thirdWake)).as("its deadline").isEqualTo(Wake.RECHECK);
    assertThat(q.isNext(third)).isFalse();
  }

  // ------------------------------------------------------------ the turn across ingresses

  /** A queue hearing {@code peers}, telling what it holds into {@code told}. */
  static AdmissionQueue queue(PeerQueues peers, List<QueueState> told) {
    return new AdmissionQueue(
        10, Duration.ofMinutes(1), Duration.ofMinutes(10), 100, peers, told::add, 0);
  }

  @Test
  void aTurnYields_toAnotherIngressWaitingWithATenantHoldingFewerSlotsClusterWide()
      throws Exception {
    PeerQueues peers = new PeerQueues(Duration.ofMinutes(1).toNanos());
    AdmissionQueue q = queue(peers, new ArrayList<>());
    q.started("n1", "m", "noisy");
    q.started("n2", "m", "noisy");
    Ticket noisy = q.enter("m", 0, "noisy", 10, 1);
    CompletableFuture<Wake> noisyWake = await(q, noisy);
    assertThat(q.isNext(noisy)).as("alone here, nobody elsewhere").isTrue();

    // Quiet runs 1 and waits at the other ingress; noisy runs 3 there and 2 here.
    peers.heard(
        head("other", 0, Map.of("quiet", 1.0), Map.of("quiet", 1, "noisy", 3)), System.nanoTime());
    assertThat(q.isNext(noisy)).as("quiet holds 1 slot, noisy 5").isFalse();
    q.released("n1");
    assertThat(noisyWake).as("the freed slot is left for quiet there").isNotDone();

    peers.heard(
        head("other", 0, Map.of("quiet", 1.0), Map.of("quiet", 4, "noisy", 3)), System.nanoTime());
    assertThat(q.isNext(noisy)).as("quiet holds 4 slots, noisy 4: equal claims").isTrue();
    peers.heard(
        head("other", 0, Map.of("quiet", 4.0), Map.of("quiet", 5, "noisy", 3)), System.nanoTime());
    assertThat(q.isNext(noisy)).as("quiet's weight 4: 5/4 slots per unit against 4").isFalse();
    peers.heard(head("other", 1, Map.of("quiet", 1.0), Map.of()), System.nanoTime());
    assertThat(q.isNext(noisy)).as("a less pressing priority is never ahead").isTrue();
    peers.heard(head("other", 0, Map.of("noisy", 1.0), Map.of("noisy", 3)), System.nanoTime());
    assertThat(q.isNext(noisy)).as("its own tenant elsewhere is no stronger").isTrue();
    q.signal();
    assertThat(now(noisyWake)).isEqualTo(Wake.TURN);
  }

  @Test
  void aPeersRelease_wakesTheHeadAtOnce() throws Exception {
    PeerQueues peers = new PeerQueues(Duration.ofMinutes(1).toNanos());
    AdmissionQueue q = queue(peers, new ArrayList<>());
    Ticket first = q.enter("m", 0, "t", 10, 1);
    Ticket second = q.enter("m", 0, "t", 10, 1);
    CompletableFuture<Wake> firstWake = await(q, first);
    CompletableFuture<Wake> secondWake = await(q, second);
    peers.freed();
    assertThat(now(firstWake)).isEqualTo(Wake.TURN);
    assertThat(secondWake).isNotDone();
  }

  @Test
  void theLocalOrder_countsTheSlotsTenantsHoldAtOtherIngresses() {
    PeerQueues peers = new PeerQueues(Duration.ofMinutes(1).toNanos());
    AdmissionQueue q = queue(peers, new ArrayList<>());
    q.started("q1", "m", "quiet");
    Ticket quiet = q.enter("m", 0, "quiet", 10, 1);
    Ticket noisy = q.enter("m", 0, "noisy", 10, 1);
    assertThat(q.isNext(noisy)).as("here noisy runs none, quiet one").isTrue();
    peers.heard(head("other", null, Map.of(), Map.of("noisy", 5)), System.nanoTime());
    assertThat(q.isNext(quiet)).as("noisy runs five at the other ingress").isTrue();
  }

  @Test
  void whatTheQueueHolds_isToldAsItChanges_withTheSlotsEachTenantHoldsHere() {
    List<QueueState> told = new ArrayList<>();
    AdmissionQueue q = queue(new PeerQueues(Duration.ofMinutes(1).toNanos()), told);
    q.started("a1", "m", "a");
    Ticket b = q.enter("m", 2, "b", 10, 2.0);
    q.enter("m", 2, "b", 10, 2.0); // nothing new
    q.released("a1");
    q.leave(b);
    assertThat(told)
        .containsExactly(
            new QueueState("m", null, Map.of(), Map.of("a", 1)),
            new QueueState("m", 2, Map.of("b", 2.0), Map.of("a", 1)),
            new QueueState("m", 2, Map.of("b", 2.0), Map.of()));
    assertThat(q.size()).isEqualTo(1);
  }

  @Test
  void aPeerStartingToWait_isReported_andItsCountsAreSummedOverPeers() {
    PeerQueues peers = new PeerQueues(1_000);
    assertThat(peers.heard(head("x", null, Map.of(), Map.of("t", 1)), 0)).isFalse();
    assertThat(peers.heard(head("x", 0, Map.of("t", 1.0), Map.of("t", 1)), 0)).isTrue();
    assertThat(peers.heard(head("x", 0, Map.of("t", 1.0), Map.of("t", 2)), 0)).isFalse();
    assertThat(peers.heard(head("y", null, null, Map.of("t", 3)), 0)).isFalse();
    assertThat(peers.running("m", "t", 1)).isEqualTo(5);
    assertThat(peers.waiting("m", 1)).isTrue();
    peers.heard(head("x", null, Map.of(), Map.of()), 2);
    assertThat(peers.waiting("m", 3)).isFalse();
    assertThat(peers.running("m", "t", 3)).as("x forgotten, y still told").isEqualTo(3);
    assertThat(peers.heard(new QueueHead("z", "m", 0, null, null), 4))
        .as("an older ingress: its priority only")
        .isTrue();
    assertThat(peers.ahead("m", 0, 0, t -> 0, 5)).isFalse();
  }
}

package io.kvrouter.tracker.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PeerIntentsTest {

  private static final int[] REPLICAS = {0, 1, 2};

  /** Each phantom lands on the candidate with the least phantom load so far, ties to the first. */
  private static double[] place(PeerIntents intents, String self, long now) {
    double[] phantom = new double[REPLICAS.length];
    intents.place(
        self,
        now,
        REPLICAS,
        new double[REPLICAS.length],
        phantom,
        (i, t) -> phantom[i] + t,
        b -> 0,
        16);
    return phantom;
  }

  @Test
  void placesOnlyWhatIsDueBeforeThisRouter_inTheOrderEveryRouterShares() {
    PeerIntents intents = new PeerIntents();
    intents.add("c", 100, 300, REPLICAS, new double[] {300, 300, 300}, 95);
    intents.add("a", 100, 100, REPLICAS, new double[] {100, 100, 100}, 95);
    intents.add("a", 106, 700, REPLICAS, new double[] {700, 700, 700}, 96);
    // Router b at 100: a's intent of 100 comes first, c's of the same instant after b's turn, a's
    // second later still.
    assertThat(place(intents, "b", 100)).containsExactly(100, 0, 0);
    // Router d at 100: a's then c's, each where it costs least.
    assertThat(place(intents, "d", 100)).containsExactly(100, 300, 0);
    assertThat(place(intents, "d", 106)).containsExactly(100, 300, 700);
  }

  @Test
  void anIntentOnlyOnSomeCandidates_staysOnThem() {
    PeerIntents intents = new PeerIntents();
    intents.add("a", 100, 50, new int[] {2}, new double[] {50}, 95);
    intents.add("a", 100, 50, new int[] {7}, new double[] {50}, 95);
    assertThat(place(intents, "b", 100)).containsExactly(0, 0, 50);
  }

  /**
   * A reservation names no intent: it ends its origin's earliest intent of its prompt size due
   * within {@link PeerIntents#MATCH_MILLIS} before it was issued.
   */
  @Test
  void aReservationEndsTheIntentItDecided_byOriginSizeAndTime() {
    PeerIntents intents = new PeerIntents();
    intents.add("a", 100, 4096, REPLICAS, new double[] {10, 10, 10}, 95);
    intents.add("a", 100, 2048, REPLICAS, new double[] {20, 20, 20}, 95);
    intents.add("b", 100, 4096, REPLICAS, new double[] {40, 40, 40}, 95);
    intents.add("a", 300, 4096, REPLICAS, new double[] {80, 80, 80}, 95);
    intents.decided("a", 4096, 103, 104);
    assertThat(intents.size()).isEqualTo(3);
    assertThat(place(intents, "z", 104)).containsExactly(20, 40, 0);
    // Too late for any intent of a at 4096 tokens: remembered, in case its intent is on its way.
    intents.decided("a", 4096, 100 + PeerIntents.MATCH_MILLIS + 1, 160);
    assertThat(intents.size()).isEqualTo(3);
    assertThat(intents.remembered()).isEqualTo(1);
  }

  @Test
  void aReservationEndsItsIntent_evenOneThatOvertookIt() {
    PeerIntents intents = new PeerIntents();
    intents.add("a", 100, 4096, REPLICAS, new double[] {10, 10, 10}, 95);
    intents.decided("a", 4096, 100, 105);
    intents.decided("a", 2048, 100, 105); // its intent still on its way
    intents.add("a", 100, 2048, REPLICAS, new double[] {10, 10, 10}, 106);
    assertThat(intents.size()).isZero();
    assertThat(intents.remembered()).isZero();
    assertThat(place(intents, "b", 106)).containsExactly(0, 0, 0);
  }

  /** Reservations whose intents never come (a peer that announces none) are not kept forever. */
  @Test
  void reservationsWithoutIntents_areForgottenOnceStale() {
    PeerIntents intents = new PeerIntents();
    intents.decided("a", 4096, 100, 100);
    assertThat(intents.remembered()).isEqualTo(1);
    intents.decided("a", 4096, 101, 101 + PeerIntents.STALE_MILLIS);
    assertThat(intents.remembered()).as("the first forgotten, the second remembered").isEqualTo(1);
  }

  @Test
  void anUndecidedIntent_isDroppedOnceStale() {
    PeerIntents intents = new PeerIntents();
    intents.add("a", 100, 10, REPLICAS, new double[] {10, 10, 10}, 95);
    assertThat(place(intents, "b", 100 + PeerIntents.STALE_MILLIS)).containsExactly(10, 0, 0);
    assertThat(place(intents, "b", 101 + PeerIntents.STALE_MILLIS)).containsExactly(0, 0, 0);
    assertThat(intents.size()).isZero();
    assertThat(intents.heardSince(95)).isTrue();
    assertThat(intents.heardSince(96)).isFalse();
    intents.heard(200);
    assertThat(intents.heardSince(200)).as("a shared timing counts as heard").isTrue();
  }

  /**
   * Of the candidates within the band of the least cost, the least queued wins, unless it would
   * give up a cached block; outside the band the cost decides.
   */
  @Test
  void choose_takesTheLeastQueuedNearTie_neverGivingUpACachedBlock() {
    PeerIntents.Band twoMillis = best -> 2;
    double[] queued = {900, 100, 0, 500};
    // 1 and 3 are near-ties of 0; 2 is not (3 ms above).
    assertThat(
            PeerIntents.choose(new double[] {50, 51, 53, 52}, new double[4], queued, twoMillis, 16))
        .isEqualTo(1);
    // 1 computes two blocks more than 0: it is no near-tie; 3 computes one more and is.
    assertThat(
            PeerIntents.choose(
                new double[] {50, 51, 53, 52},
                new double[] {64, 96, 64, 80},
                queued,
                twoMillis,
                16))
        .isEqualTo(3);
    double inf = Double.POSITIVE_INFINITY;
    assertThat(PeerIntents.choose(new double[] {inf, inf}, new double[2], queued, twoMillis, 16))
        .isEqualTo(-1);
  }
}

package io.kvrouter.tracker.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PeerIntentsTest {

  private static final int[] REPLICAS = {0, 1, 2};

  private static final String[] IDS = {"r0", "r1", "r2"};

  /**
   * Each phantom lands on the candidate with the least phantom load so far; of equals, the first by
   * the intent's own order (so the tests read sorted loads where several candidates tie).
   */
  private static double[] place(PeerIntents intents, String self, long now) {
    return place(intents, self, now, new double[REPLICAS.length], since -> new double[3]);
  }

  /** The same on a view with {@code queued} prefill, {@code own} of it this router's. */
  private static double[] place(
      PeerIntents intents, String self, long now, double[] queued, PeerIntents.OwnSince own) {
    double[] phantom = new double[REPLICAS.length];
    intents.place(
        self, now, REPLICAS, IDS, queued, phantom, own, (i, t, ahead) -> ahead + t, b -> 0, 16);
    return phantom;
  }

  /**
   * A router deciding several requests of one instant: its own first decision, taken after a peer's
   * intent due at that instant, does not move that intent. The peer placed it without it.
   */
  @Test
  void ownReservationsAfterAnIntent_doNotMoveIt() {
    PeerIntents intents = new PeerIntents();
    intents.add("a", 100, 100, REPLICAS, new double[] {100, 100, 100}, 95);
    double[] alone = place(intents, "b", 100);
    int where = alone[0] > 0 ? 0 : alone[1] > 0 ? 1 : 2;
    double[] queued = new double[3];
    queued[where] = 100; // b's own reservation since, on the very replica a's intent goes to
    double[] mine = queued.clone();
    assertThat(place(intents, "b", 100, queued, since -> since <= 100 ? mine : new double[3]))
        .containsExactly(alone);
    // One b reserved before the intent's time counts: the intent goes elsewhere.
    assertThat(place(intents, "b", 100, queued, since -> new double[3])[where]).isZero();
  }

  @Test
  void placesOnlyWhatIsDueBeforeThisRouter_inTheOrderEveryRouterShares() {
    PeerIntents intents = new PeerIntents();
    intents.add("c", 100, 300, REPLICAS, new double[] {300, 300, 300}, 95);
    intents.add("a", 100, 100, REPLICAS, new double[] {100, 100, 100}, 95);
    intents.add("a", 106, 700, REPLICAS, new double[] {700, 700, 700}, 96);
    // Router b at 100: a's intent of 100 comes first, c's of the same instant after b's turn, a's
    // second later still.
    assertThat(sorted(place(intents, "b", 100))).containsExactly(0, 0, 100);
    // Router d at 100: a's then c's, each where it costs least.
    assertThat(sorted(place(intents, "d", 100))).containsExactly(0, 100, 300);
    assertThat(sorted(place(intents, "d", 106))).containsExactly(100, 300, 700);
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
    assertThat(sorted(place(intents, "z", 104))).containsExactly(0, 20, 40);
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
    assertThat(sorted(place(intents, "b", 100 + PeerIntents.STALE_MILLIS)))
        .containsExactly(0, 0, 10);
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
    long[] order = new long[4];
    // 1 and 3 are near-ties of 0; 2 is not (3 ms above).
    assertThat(
            PeerIntents.choose(
                new double[] {50, 51, 53, 52}, new double[4], queued, order, twoMillis, 16))
        .isEqualTo(1);
    // 1 computes two blocks more than 0: it is no near-tie; 3 computes one more and is.
    assertThat(
            PeerIntents.choose(
                new double[] {50, 51, 53, 52},
                new double[] {64, 96, 64, 80},
                queued,
                order,
                twoMillis,
                16))
        .isEqualTo(3);
    double inf = Double.POSITIVE_INFINITY;
    assertThat(
            PeerIntents.choose(
                new double[] {inf, inf}, new double[2], queued, order, twoMillis, 16))
        .isEqualTo(-1);
  }

  /**
   * Exact ties (a cold prompt, idle replicas) go where the request's own order puts them: the same
   * replica on every router, however each router numbers the replicas, and not always the first, so
   * a burst of them spreads.
   */
  @Test
  void choose_spreadsExactTies_alikeOnEveryRouter() {
    String[] ids = {"pod-a", "pod-b", "pod-c", "pod-d", "pod-e", "pod-f", "pod-g", "pod-h"};
    String[] reversed = new String[ids.length];
    for (int i = 0; i < ids.length; i++) {
      reversed[i] = ids[ids.length - 1 - i];
    }
    double[] same = new double[ids.length];
    java.util.Arrays.fill(same, 100);
    java.util.Set<String> chosen = new java.util.HashSet<>();
    for (int tokens = 4096; tokens < 4096 + 64; tokens++) {
      int here =
          PeerIntents.choose(
              same, same, new double[8], PeerIntents.order("r1", tokens, ids), b -> 2, 16);
      int there =
          PeerIntents.choose(
              same, same, new double[8], PeerIntents.order("r1", tokens, reversed), b -> 2, 16);
      assertThat(reversed[there]).isEqualTo(ids[here]);
      chosen.add(ids[here]);
    }
    assertThat(chosen).as("64 requests of different sizes over 8 idle replicas").hasSize(8);
  }

  private static double[] sorted(double[] loads) {
    double[] copy = loads.clone();
    java.util.Arrays.sort(copy);
    return copy;
  }
}

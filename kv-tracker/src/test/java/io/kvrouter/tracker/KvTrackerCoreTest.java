package io.kvrouter.tracker;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.PrefillCompleted;
import io.kvrouter.protocol.Released;
import io.kvrouter.protocol.ReplicaCleared;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.ReplicaSnapshot;
import io.kvrouter.protocol.Reserved;
import io.kvrouter.protocol.Tier;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.tracker.feed.EventSequencer;
import io.kvrouter.tracker.policy.BusyThresholds;
import io.kvrouter.tracker.policy.PolicySettings;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class KvTrackerCoreTest {

  static final String MODEL = "m";
  static final BlockKeys KEYS = BlockKeys.of(MODEL, 16);

  /** A tracker of ingress "in-1" whose replicas are busy at {@code maxInFlight} reservations. */
  static KvTrackerCore busyAt(int maxInFlight) {
    TrackerConfig defaults = TrackerConfig.defaults("in-1");
    return new KvTrackerCore(defaults.withBusy(new BusyThresholds(0.97, 64, maxInFlight)));
  }

  static ReplicaInfo replica(String id, boolean kvEvents) {
    return new ReplicaInfo(
        id, 0, MODEL, "http://" + id, 16, List.of(Tier.GPU), "both", kvEvents, true);
  }

  static KvTrackerCore tracker(String ingress, String... replicas) {
    KvTrackerCore t = new KvTrackerCore(TrackerConfig.defaults(ingress));
    for (String r : replicas) {
      t.replicaUp(replica(r, true));
    }
    return t;
  }

  static int[] tokens(int n, int salt) {
    int[] t = new int[n];
    for (int i = 0; i < n; i++) {
      t[i] = salt * 100_000 + i;
    }
    return t;
  }

  static KvEventBatch stored(String replica, long seq, long[] keys, int blocks) {
    long[] k = Arrays.copyOf(keys, blocks);
    long[] h = new long[blocks];
    for (int i = 0; i < blocks; i++) {
      h[i] = k[i] ^ replica.hashCode();
    }
    return new KvEventBatch(
        replica, 1, seq, new KvEvent[] {new BlocksStored(BlocksStored.ROOT, h, k, Tier.GPU)});
  }

  @Test
  void selectAndReserve_choosesTheCachedReplica_andReservesOnlyWhatItLacks() {
    KvTrackerCore t = tracker("in-1", "a", "b", "c");
    long[] prompt = KEYS.keys(tokens(160, 1)); // 10 blocks
    t.apply(stored("b", 0, prompt, 6));

    Decision d = t.selectAndReserve(new RouteRequest("q1", MODEL, prompt, 165), 1_000);

    assertThat(d.chosen()).isEqualTo("b");
    assertThat(d.ranked())
        .extracting(Decision.Candidate::replicaId)
        .startsWith("b")
        .containsExactlyInAnyOrder("a", "b", "c");
    assertThat(d.ranked().get(0).matchedBlocks()).isEqualTo(6);
    assertThat(d.ranked().get(0).cachedTokens()).isEqualTo(96);
    Reserved r = d.reserved();
    assertThat(r.ingressId()).isEqualTo("in-1");
    assertThat(r.replicaId()).isEqualTo("b");
    assertThat(r.anchorKey()).isEqualTo(prompt[5]);
    assertThat(r.newKeys()).containsExactly(Arrays.copyOfRange(prompt, 6, 10));
    assertThat(r.prefillTokens()).isEqualTo(165 - 96);
    assertThat(t.load().inFlight(t.replicaIndex("b"))).isEqualTo(1);
    assertThat(t.load().prefillTokens(t.replicaIndex("b"))).isEqualTo(69);
    // predicted entries: b now covers the whole prompt for the next decision
    assertThat(t.matchedBlocks(prompt)).containsEntry("b", 10);
  }

  /**
   * What operators read to see why a replica is passed over: how late this router's first tokens
   * from each replica have come, once the replica's warm-up first tokens are past.
   */
  @Test
  void lags_reportHowLateThisRoutersFirstTokensCame_afterEachReplicasWarmup() {
    KvTrackerCore t = lagTracker();
    int warmup = PolicySettings.defaults().lag().warmup();
    assertThat(t.lags(0)).containsEntry("a", 0.0);
    long now = lateFirstTokens(t, warmup, 0, 100);
    assertThat(t.lags(now)).as("warm-up").containsEntry("a", 0.0);
    now = lateFirstTokens(t, 1, now, 200);
    assertThat(t.lags(now).get("a")).as("0.3 of about a second").isBetween(250.0, 300.0);
    t.replicaUp(replica("b", true));
    assertThat(t.lags(now)).containsEntry("b", 0.0);
    t.replicaDown("a");
    assertThat(t.lags(now)).containsOnlyKeys("b");
  }

  /**
   * A new epoch of a replica's stream (its engine restarted, and every tracker hears it as a batch
   * or a snapshot of a later epoch) starts the replica's lag over: a new engine process answers its
   * first requests late for reasons that pass, as a fresh one does, so they are warm-up again.
   * Before, a restarted engine's cold answers were charged at once. A later batch of the same epoch
   * changes nothing.
   */
  @Test
  void aNewEpochOfTheReplicasStream_startsItsLagOver_warmupIncluded() {
    KvTrackerCore t = lagTracker();
    int warmup = PolicySettings.defaults().lag().warmup();
    t.apply(cleared("a", 1, 0));
    long now = lateFirstTokens(t, warmup + 1, 0, 0);
    assertThat(t.lags(now).get("a")).isBetween(250.0, 300.0);

    t.apply(cleared("a", 1, 1)); // the same engine's next batch
    assertThat(t.lags(now).get("a")).isBetween(250.0, 300.0);

    t.apply(cleared("a", 2, 0)); // the engine restarted
    assertThat(t.lags(now)).containsEntry("a", 0.0);
    now = lateFirstTokens(t, warmup, now, 100);
    assertThat(t.lags(now)).as("the new engine's warm-up").containsEntry("a", 0.0);
    now = lateFirstTokens(t, 1, now, 200);
    assertThat(t.lags(now).get("a")).isBetween(250.0, 300.0);

    // A tracker that missed the restart's batches hears of it in a snapshot.
    t.installSnapshot(new ReplicaSnapshot("a", 3, 5, new KvEvent[0]));
    assertThat(t.lags(now)).containsEntry("a", 0.0);
  }

  /**
   * One replica "a", without the online fit (it would learn a constant lateness into its
   * predictions, and the lag would not see it).
   */
  private static KvTrackerCore lagTracker() {
    KvTrackerCore t =
        new KvTrackerCore(TrackerConfig.defaults("in-1").withPolicy("kvrouter@timing.fit=off"));
    t.replicaUp(replica("a", true));
    return t;
  }

  private static KvEventBatch cleared(String replica, long epoch, long seq) {
    return new KvEventBatch(replica, epoch, seq, new KvEvent[] {new ReplicaCleared()});
  }

  /**
   * {@code n} requests to replica "a", each getting its first token a second after its decision
   * (later than any prediction); returns the time after the last.
   */
  private static long lateFirstTokens(KvTrackerCore t, int n, long now, int salt) {
    for (int i = 0; i < n; i++) {
      String id = "late-" + salt + "-" + i;
      Decision d =
          t.selectAndReserve(new RouteRequest(id, MODEL, KEYS.keys(tokens(64, salt + i)), 64), now);
      assertThat(d.chosen()).isEqualTo("a");
      now += 1_000;
      t.prefillCompleted(id, now);
      t.released(id);
    }
    return now;
  }

  @Test
  void noReplicaForTheModel_givesNoDecision() {
    KvTrackerCore t = tracker("in-1", "a");
    Decision d = t.selectAndReserve(new RouteRequest("q", "other", new long[0], 3), 0);
    assertThat(d.placed()).isFalse();
    assertThat(d.reserved()).isNull();
  }

  @Test
  void lifecycle_prefillThenRelease_returnsAllLoad_andStampsIncreasingSeqs() {
    KvTrackerCore t = tracker("in-1", "a");
    long[] prompt = KEYS.keys(tokens(64, 2));
    Decision d = t.selectAndReserve(new RouteRequest("q1", MODEL, prompt, 64), 0);
    int a = t.replicaIndex("a");
    PrefillCompleted p = t.prefillCompleted("q1", 0);
    assertThat(p.seq()).isEqualTo(d.reserved().seq() + 1);
    assertThat(t.load().prefillTokens(a)).isZero();
    assertThat(t.load().decodeTokens(a)).isEqualTo(64);
    Released r = t.released("q1");
    assertThat(r.seq()).isEqualTo(p.seq() + 1);
    assertThat(t.load().inFlight(a)).isZero();
    assertThat(t.load().decodeTokens(a)).isZero();
    assertThat(t.released("q1")).isNull();
    assertThat(t.prefillCompleted("unknown", 0)).isNull();
  }

  @Test
  void peerReplaysReservations_reachesTheSameLedgerAndOriginDigest() {
    KvTrackerCore a = tracker("in-a", "r1", "r2");
    KvTrackerCore b = tracker("in-b", "r1", "r2");
    long[] prompt = KEYS.keys(tokens(320, 3));
    Decision d = a.selectAndReserve(new RouteRequest("q1", MODEL, prompt, 320), 0);
    assertThat(b.applyReservation(d.reserved(), 0)).isTrue();
    assertThat(b.applyReservation(d.reserved(), 0)).isFalse(); // duplicate
    assertThat(b.load().inFlight(b.replicaIndex(d.chosen()))).isEqualTo(1);
    assertThat(b.matchedBlocks(prompt)).containsEntry(d.chosen(), 20); // predicted on the peer
    assertThat(a.digests().origins().get("in-a").count()).as("q1 open on its origin").isEqualTo(1);
    assertThat(b.digests().origins()).isEqualTo(a.digests().origins());

    b.applyReservation(a.prefillCompleted("q1", 0), 0);
    assertThat(b.digests().origins()).isEqualTo(a.digests().origins());
    b.applyReservation(a.released("q1"), 0);
    assertThat(b.digests().origins()).isEqualTo(a.digests().origins()).isEmpty();
    assertThat(b.load().inFlight(b.replicaIndex(d.chosen()))).isZero();
  }

  @Test
  void engineEventConfirmsPrediction_andRemovalThenEndsTheHolding() {
    KvTrackerCore t = tracker("in-1", "a", "b");
    long[] prompt = KEYS.keys(tokens(64, 4));
    Decision d = t.selectAndReserve(new RouteRequest("q1", MODEL, prompt, 64), 0);
    String chosen = d.chosen();
    t.apply(stored(chosen, 0, prompt, 4)); // confirmed
    t.expire(1_000_000); // predictions would have expired; confirmed blocks stay
    assertThat(t.matchedBlocks(prompt)).containsEntry(chosen, 4);
    long[] hashes = new long[4];
    for (int i = 0; i < 4; i++) {
      hashes[i] = prompt[i] ^ chosen.hashCode();
    }
    t.apply(
        new KvEventBatch(
            chosen,
            1,
            1,
            new KvEvent[] {new BlocksRemoved(Arrays.copyOfRange(hashes, 2, 4), Tier.GPU)}));
    assertThat(t.matchedBlocks(prompt)).containsEntry(chosen, 2);
  }

  @Test
  void predictionTheEngineNeverConfirms_endsSoonAfterThePrefill_whileConfirmedBlocksStay() {
    KvTrackerCore origin = tracker("in-1", "a");
    KvTrackerCore peer = tracker("in-2", "a");
    long[] prompt = KEYS.keys(tokens(64, 11)); // 4 blocks
    Decision d = origin.selectAndReserve(new RouteRequest("q1", MODEL, prompt, 64), 0);
    peer.applyReservation(d.reserved(), 0);
    origin.apply(stored("a", 0, prompt, 2)); // the engine confirms 2 of the 4 blocks
    peer.apply(stored("a", 0, prompt, 2));
    PrefillCompleted p = origin.prefillCompleted("q1", 100);
    peer.applyReservation(p, 100);
    long confirm = TrackerConfig.defaults("in-1").predictedConfirmMillis();

    for (KvTrackerCore t : List.of(origin, peer)) {
      t.expire(100 + confirm - 1);
      assertThat(t.matchedBlocks(prompt)).as("still waiting").containsEntry("a", 4);
      t.expire(100 + confirm);
      assertThat(t.matchedBlocks(prompt))
          .as("what the engine confirmed, long before the predicted-entry TTL")
          .containsEntry("a", 2);
    }
  }

  @Test
  void approximateMode_predictionsOutliveThePrefill_untilTheirTtl() {
    KvTrackerCore t = new KvTrackerCore(TrackerConfig.defaults("in-1"));
    t.replicaUp(replica("x", false));
    long[] prompt = KEYS.keys(tokens(64, 12));
    t.selectAndReserve(new RouteRequest("q1", MODEL, prompt, 64), 0);
    t.prefillCompleted("q1", 10);
    t.expire(60_000);
    assertThat(t.matchedBlocks(prompt)).containsEntry("x", 4);
  }

  @Test
  void approximateMode_predictionsAreTheIndex_untilTheirTtlEnds() {
    KvTrackerCore t = new KvTrackerCore(TrackerConfig.defaults("in-1"));
    t.replicaUp(replica("x", false));
    t.replicaUp(replica("y", false));
    long[] prompt = KEYS.keys(tokens(512, 5));
    String first = t.selectAndReserve(new RouteRequest("q1", MODEL, prompt, 512), 0).chosen();
    t.released("q1");
    for (int i = 0; i < 5; i++) {
      assertThat(t.selectAndReserve(new RouteRequest("p" + i, MODEL, prompt, 512), 10).chosen())
          .isEqualTo(first);
      t.released("p" + i);
    }
    t.expire(10 + 120_000);
    assertThat(t.matchedBlocks(prompt)).isEmpty();
  }

  @Test
  void leaseExpiry_returnsTheLoadOfNeverReleasedRequests() {
    KvTrackerCore t = tracker("in-1", "a");
    t.selectAndReserve(new RouteRequest("q1", MODEL, KEYS.keys(tokens(32, 6)), 32), 0);
    assertThat(t.expire(599_999)).isEmpty();
    assertThat(t.expire(600_000))
        .as("the end of an own lease is broadcast like any release")
        .containsExactly(new Released("in-1", 1, "q1"));
    assertThat(t.load().inFlight(t.replicaIndex("a"))).isZero();
    assertThat(t.released("q1")).isNull();
  }

  @Test
  void newEpoch_clearsTheReplicaBeforeApplying() {
    KvTrackerCore t = tracker("in-1", "a");
    long[] one = KEYS.keys(tokens(64, 7));
    long[] two = KEYS.keys(tokens(64, 8));
    t.apply(stored("a", 0, one, 4));
    KvEventBatch restart =
        new KvEventBatch(
            "a",
            2,
            0,
            new KvEvent[] {
              new BlocksStored(BlocksStored.ROOT, new long[] {9}, new long[] {two[0]}, Tier.GPU)
            });
    assertThat(t.apply(restart).outcome()).isEqualTo(EventSequencer.Outcome.NEW_EPOCH);
    assertThat(t.matchedBlocks(one)).isEmpty();
    assertThat(t.matchedBlocks(two)).containsEntry("a", 1);
    assertThat(t.digests().replicas().get("a").epoch()).isEqualTo(2);
  }

  @Test
  void gapAndDuplicate_areNotApplied_andTellTheSeqToReplayFrom() {
    KvTrackerCore t = tracker("in-1", "a");
    long[] p = KEYS.keys(tokens(64, 9));
    t.apply(stored("a", 0, p, 1));
    EventSequencer.Verdict gap = t.apply(stored("a", 2, p, 3));
    assertThat(gap.outcome()).isEqualTo(EventSequencer.Outcome.GAP);
    assertThat(gap.expectedSeq()).isEqualTo(1);
    assertThat(t.matchedBlocks(p)).containsEntry("a", 1);
    assertThat(t.apply(stored("a", 0, p, 4)).outcome()).isEqualTo(EventSequencer.Outcome.DUPLICATE);
    assertThat(t.matchedBlocks(p)).containsEntry("a", 1);
  }

  @Test
  void replicaDown_purgesItFromIndexLedgerAndCandidates() {
    KvTrackerCore t = tracker("in-1", "a", "b");
    long[] p = KEYS.keys(tokens(64, 10));
    t.apply(stored("a", 0, p, 4));
    t.loadReported(new ReplicaLoad("a", 1, 3, 1, 0.5, 0, 0, 0));
    t.replicaDown("a");
    assertThat(t.matchedBlocks(p)).isEmpty();
    assertThat(t.replicas()).containsExactly("b");
    for (int i = 0; i < 5; i++) {
      assertThat(t.selectAndReserve(new RouteRequest("q" + i, MODEL, p, 64), 0).chosen())
          .isEqualTo("b");
    }
  }

  @Test
  void replicaDown_keepsPeersReservationsOnIt_soTheOriginsDigestStaysItsStreams() {
    KvTrackerCore origin = tracker("in-a", "r");
    KvTrackerCore peer = tracker("in-b", "r");
    Decision d = origin.selectAndReserve(new RouteRequest("q", MODEL, new long[0], 10), 0);
    peer.replicaDown("r");
    origin.replicaDown("r");
    peer.applyReservation(d.reserved(), 0);
    assertThat(peer.digests().origins()).isEqualTo(origin.digests().origins()).isNotEmpty();

    Released released = origin.released("q");
    assertThat(released).as("the origin still ends its request").isNotNull();
    peer.applyReservation(released, 0);
    assertThat(peer.digests().origins()).isEqualTo(origin.digests().origins()).isEmpty();
  }

  @Test
  void dropOrigin_forgetsAPeersReservations() {
    KvTrackerCore a = tracker("in-a", "r");
    KvTrackerCore b = tracker("in-b", "r");
    Decision d = a.selectAndReserve(new RouteRequest("q", MODEL, new long[0], 10), 0);
    b.applyReservation(d.reserved(), 0);
    assertThat(b.dropOrigin("in-a")).isEqualTo(1);
    assertThat(b.openReservations()).isZero();
  }
}

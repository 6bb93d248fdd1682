package io.kvrouter.tracker;

import static io.kvrouter.tracker.KvTrackerCoreTest.KEYS;
import static io.kvrouter.tracker.KvTrackerCoreTest.MODEL;
import static io.kvrouter.tracker.KvTrackerCoreTest.stored;
import static io.kvrouter.tracker.KvTrackerCoreTest.tokens;
import static io.kvrouter.tracker.KvTrackerCoreTest.tracker;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.Released;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.ReservationMark;
import io.kvrouter.protocol.ReservationReplay;
import io.kvrouter.protocol.Reserved;
import io.kvrouter.tracker.feed.EventSequencer;
import io.kvrouter.tracker.ledger.ReservationDigest;
import io.kvrouter.tracker.sync.OwnReservationLog;
import io.kvrouter.tracker.sync.PeerSequencer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReservationPlaneTest {

  /** Origin "in-1" places three requests and releases the first; returns its five events. */
  static List<ReservationEvent> originEvents(KvTrackerCore origin) {
    List<ReservationEvent> out = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      out.add(
          origin
              .selectAndReserve(
                  new RouteRequest("q" + i, MODEL, KEYS.keys(tokens(64, i + 1)), 64), 0)
              .reserved());
    }
    out.add(origin.prefillCompleted("q0", 0));
    out.add(origin.released("q1"));
    return out;
  }

  /**
   * The origin's digest of its own reservations after {@link #originEvents}: q0 and q2 are still
   * open, so a peer that matches it holds the same two (not merely no digest, as the origin would
   * if digests were empty).
   */
  static ReservationDigest openAfterOriginEvents(KvTrackerCore origin) {
    ReservationDigest digest = origin.digests().origins().get("in-1");
    assertThat(digest.count()).as("q0 and q2 open").isEqualTo(2);
    return digest;
  }

  @Test
  void heldBackReservation_reachesPeersOnlyWhenAnnounced_andOneGivenBackFirstNeverDoes() {
    KvTrackerCore origin = tracker("in-1", "a", "b");
    KvTrackerCore peer = tracker("in-2", "a", "b");

    Decision kept =
        origin.selectAndReserveUnannounced(
            new RouteRequest("kept", MODEL, KEYS.keys(tokens(64, 1)), 64), 0);
    Decision dropped =
        origin.selectAndReserveUnannounced(
            new RouteRequest("dropped", MODEL, KEYS.keys(tokens(64, 2)), 64), 0);
    assertThat(kept.reserved()).as("nothing to broadcast yet").isNull();
    assertThat(dropped.reserved()).isNull();
    assertThat(origin.loads().values().stream().mapToInt(l -> l.inFlight()).sum())
        .as("the origin counts both itself")
        .isEqualTo(2);

    assertThat(origin.released("dropped")).as("given back before anyone heard of it").isNull();
    Reserved announced = origin.announce("kept");
    assertThat(announced.requestId()).isEqualTo("kept");
    assertThat(announced.seq()).as("the first own event: no seq was spent on the other").isZero();
    assertThat(origin.announce("kept")).as("announced once").isNull();

    assertThat(peer.applyPeer(announced, 0)).isEqualTo(PeerSequencer.Offer.NO_GAP);
    assertThat(peer.loads().get(kept.chosen()).inFlight()).isEqualTo(1);
    assertThat(peer.loads().values().stream().mapToInt(l -> l.inFlight()).sum())
        .as("the peer never counts the one given back")
        .isEqualTo(1);
    assertThat(peer.applyPeer(origin.released("kept"), 0)).isEqualTo(PeerSequencer.Offer.NO_GAP);
  }

  @Test
  void reorderedPeerEvents_areAppliedInSeqOrder_andReachTheOriginsDigest() {
    KvTrackerCore origin = tracker("in-1", "a", "b");
    KvTrackerCore peer = tracker("in-2", "a", "b");
    List<ReservationEvent> events = originEvents(origin);

    assertThat(peer.applyPeer(events.get(1), 0)).as("gap before seq 1").isEqualTo(0);
    assertThat(peer.applyPeer(events.get(0), 0)).isEqualTo(PeerSequencer.Offer.NO_GAP);
    for (ReservationEvent e : events.subList(2, events.size())) {
      peer.applyPeer(e, 0);
      peer.applyPeer(e, 0); // duplicates change nothing
    }

    assertThat(peer.digests().origins().get("in-1")).isEqualTo(openAfterOriginEvents(origin));
    assertThat(peer.peerBehind(origin.ownMark())).isEqualTo(PeerSequencer.Offer.NO_GAP);
  }

  @Test
  void lostPeerEvent_isRepairedByTheOriginsReplay() {
    KvTrackerCore origin = tracker("in-1", "a", "b");
    KvTrackerCore peer = tracker("in-2", "a", "b");
    List<ReservationEvent> events = originEvents(origin);
    peer.applyPeer(events.get(0), 0);
    // events[1] is lost
    long gap = peer.applyPeer(events.get(2), 0);
    assertThat(gap).isEqualTo(1);

    ReservationReplay replay = origin.ownReplay(gap);
    assertThat(replay.snapshot()).isFalse();
    peer.applyPeerReplay(replay, 0);

    assertThat(peer.digests().origins().get("in-1")).isEqualTo(openAfterOriginEvents(origin));
  }

  @Test
  void lostLastEvent_isRevealedByTheOriginsMark() {
    KvTrackerCore origin = tracker("in-1", "a", "b");
    KvTrackerCore peer = tracker("in-2", "a", "b");
    List<ReservationEvent> events = originEvents(origin);
    events.subList(0, events.size() - 1).forEach(e -> peer.applyPeer(e, 0));

    ReservationMark mark = origin.ownMark();
    assertThat(peer.peerBehind(mark)).isEqualTo(events.size() - 1);
  }

  @Test
  void lateTracker_getsASnapshotWhenTheLogNoLongerReachesBack() {
    OwnReservationLog log = new OwnReservationLog("in-1", 2);
    Reserved r0 = new Reserved("in-1", 0, "q0", "a", 10, 10, 0, new long[0], 1000);
    Reserved r1 = new Reserved("in-1", 1, "q1", "a", 10, 10, 0, new long[0], 1000);
    log.record(r0);
    log.record(r1);
    log.record(new Released("in-1", 2, "q0"));

    ReservationReplay fromStart = log.replayFrom(0);
    assertThat(fromStart.snapshot()).isTrue();
    assertThat(fromStart.nextSeq()).isEqualTo(3);
    assertThat(fromStart.events()).containsExactly(r1);

    ReservationReplay recent = log.replayFrom(1);
    assertThat(recent.snapshot()).isFalse();
    assertThat(recent.events()).hasSize(2);
  }

  @Test
  void snapshotReplay_rebuildsTheOriginsReservationsOnALateTracker() {
    KvTrackerCore origin = tracker("in-1", "a", "b");
    originEvents(origin);
    KvTrackerCore late = tracker("in-3", "a", "b");

    late.applyPeerReplay(
        new ReservationReplay(
            "in-1", true, origin.ownMark().nextSeq(), origin.ownReplay(Long.MIN_VALUE).events()),
        0);

    assertThat(late.digests().origins().get("in-1")).isEqualTo(openAfterOriginEvents(origin));
    assertThat(late.peerBehind(origin.ownMark())).isEqualTo(PeerSequencer.Offer.NO_GAP);
  }

  @Test
  void snapshotReplay_dropsReservationsTheOriginNoLongerHolds() {
    KvTrackerCore origin = tracker("in-1", "a", "b");
    KvTrackerCore peer = tracker("in-2", "a", "b");
    List<ReservationEvent> events = originEvents(origin);
    events.subList(0, 3).forEach(e -> peer.applyPeer(e, 0)); // q1's release is lost
    assertThat(peer.digests().origins().get("in-1").count()).isEqualTo(3);

    peer.applyPeerReplay(
        new ReservationReplay(
            "in-1", true, origin.ownMark().nextSeq(), origin.ownReplay(Long.MIN_VALUE).events()),
        0);

    assertThat(peer.digests().origins().get("in-1"))
        .isEqualTo(origin.digests().origins().get("in-1"));
    assertThat(peer.digests().origins().get("in-1").count()).isEqualTo(2);
  }

  @Test
  void earlyEventBatch_isHeldAndAppliedWhenTheMissingOneArrives() {
    KvTrackerCore t = tracker("in-1", "a");
    long[] prompt = KEYS.keys(tokens(64, 1));
    assertThat(t.apply(stored("a", 1, prompt, 4)).outcome()).isEqualTo(EventSequencer.Outcome.GAP);
    assertThat(t.apply(stored("a", 0, prompt, 2)).outcome())
        .isEqualTo(EventSequencer.Outcome.APPLY);

    assertThat(t.digests().replicas().get("a").seq()).isEqualTo(1);
    assertThat(t.matchedBlocks(prompt)).containsEntry("a", 4);
  }

  @Test
  void heartbeatAheadOfTheWatermark_revealsLostLastBatches() {
    KvTrackerCore t = tracker("in-1", "a");
    t.apply(stored("a", 0, KEYS.keys(tokens(64, 1)), 1));
    assertThat(t.behind("a", 1, 0)).isNull();
    assertThat(t.behind("a", 1, 3).fromSeq()).isEqualTo(1);
    assertThat(t.behind("a", 2, 0).fromSeq()).as("a newer epoch").isZero();
  }
}

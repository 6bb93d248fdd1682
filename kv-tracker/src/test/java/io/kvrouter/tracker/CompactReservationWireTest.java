package io.kvrouter.tracker;

import static io.kvrouter.tracker.KvTrackerCoreTest.KEYS;
import static io.kvrouter.tracker.KvTrackerCoreTest.MODEL;
import static io.kvrouter.tracker.KvTrackerCoreTest.replica;
import static io.kvrouter.tracker.KvTrackerCoreTest.tokens;
import static io.kvrouter.tracker.KvTrackerCoreTest.tracker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvrouter.protocol.CompactPrefillCompleted;
import io.kvrouter.protocol.CompactReleased;
import io.kvrouter.protocol.CompactReservationEvent;
import io.kvrouter.protocol.CompactReserved;
import io.kvrouter.protocol.PrefillCompleted;
import io.kvrouter.protocol.Released;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.ReservationReplay;
import io.kvrouter.protocol.Reserved;
import io.kvrouter.tracker.sync.PeerSequencer;
import io.kvrouter.tracker.sync.ReservationCodec;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The compact reservation wire between trackers: an origin that names its reservations by seq, its
 * events through {@link ReservationCodec} and back, and what peers make of them, live, replayed and
 * in a snapshot, beside origins of an earlier version that send the full form.
 */
class CompactReservationWireTest {

  private static final long UID = 0x51d7_0c3a_9be4_2f11L;

  private static KvTrackerCore compactTracker(String ingress) {
    KvTrackerCore t =
        new KvTrackerCore(TrackerConfig.defaults(ingress).withCompactReservations(true));
    t.replicaUp(replica("a", true));
    t.replicaUp(replica("b", true));
    return t;
  }

  /** The events as a peer gets them over the compact wire (the origin's uid resolved back). */
  private static List<ReservationEvent> overTheWire(List<ReservationEvent> events) {
    ReservationCodec codec = new ReservationCodec(UID);
    List<ReservationEvent> out = new ArrayList<>();
    for (ReservationEvent e : events) {
      CompactReservationEvent wire = codec.encode(e);
      assertThat(wire.origin()).isEqualTo(UID);
      assertThat(wire.seq()).isEqualTo(e.seq());
      out.add(ReservationCodec.decode(wire, e.ingressId()));
    }
    return out;
  }

  @Test
  void laterEvents_nameTheReservationByTheSeqOfItsReserved() {
    KvTrackerCore origin = compactTracker("in-1");
    List<ReservationEvent> events = ReservationPlaneTest.originEvents(origin);
    ReservationCodec codec = new ReservationCodec(UID);

    assertThat(events.get(0).requestId()).isEqualTo("#0");
    assertThat(events.get(3)).isEqualTo(new PrefillCompleted("in-1", 3, "#0"));
    assertThat(events.get(4)).isEqualTo(new Released("in-1", 4, "#1"));
    assertThat(codec.encode(events.get(3))).isEqualTo(new CompactPrefillCompleted(UID, 3, 3));
    assertThat(codec.encode(events.get(4))).isEqualTo(new CompactReleased(UID, 4, 3));
    Reserved first = (Reserved) events.get(0);
    CompactReserved wire = (CompactReserved) codec.encode(first);
    assertThat(wire.keys()).containsExactly(first.newKeys());
    assertThat(ReservationCodec.decode(wire, "in-1"))
        .as("all a peer reads, the anchor and the lease aside")
        .usingRecursiveComparison()
        .ignoringFields("anchorKey", "leaseMillis")
        .isEqualTo(first);
    assertThat(origin.released("q0", 0)).isEqualTo(new Released("in-1", 5, "#0"));
  }

  @Test
  void peer_ofACompactOrigin_holdsWhatTheOriginHolds_andEndsItWithIt() {
    KvTrackerCore origin = compactTracker("in-1");
    KvTrackerCore peer = compactTracker("in-2");
    for (ReservationEvent e : overTheWire(ReservationPlaneTest.originEvents(origin))) {
      assertThat(peer.applyPeer(e, 0)).isEqualTo(PeerSequencer.Offer.NO_GAP);
    }
    assertThat(peer.digests().origins().get("in-1"))
        .isEqualTo(ReservationPlaneTest.openAfterOriginEvents(origin));
    assertThat(peer.loads()).as("in flight, prefill and decode tokens").isEqualTo(origin.loads());

    overTheWire(List.of(origin.released("q0", 0), origin.released("q2", 0)))
        .forEach(e -> peer.applyPeer(e, 0));
    assertThat(peer.openReservations()).isZero();
    assertThat(peer.loads()).isEqualTo(origin.loads());
  }

  @Test
  void replayAndSnapshot_ofACompactOrigin_nameReservationsAsItsLiveEventsDid() {
    KvTrackerCore origin = compactTracker("in-1");
    KvTrackerCore peer = compactTracker("in-2");
    List<ReservationEvent> live = overTheWire(ReservationPlaneTest.originEvents(origin));
    peer.applyPeer(live.get(0), 0);
    peer.applyPeer(live.get(1), 0);
    // q2's Reserved and q0's PrefillCompleted are lost; q1's Released arrives
    assertThat(peer.applyPeer(live.get(4), 0)).isEqualTo(2);
    peer.applyPeerReplay(origin.ownReplay(2), 0);
    assertThat(peer.digests().origins().get("in-1"))
        .isEqualTo(ReservationPlaneTest.openAfterOriginEvents(origin));

    KvTrackerCore late = compactTracker("in-3");
    late.applyPeer(live.get(0), 0); // q0 live, then the rest as a snapshot
    ReservationReplay snapshot =
        new ReservationReplay(
            "in-1", true, origin.ownMark().nextSeq(), origin.ownReplay(Long.MIN_VALUE).events());
    late.applyPeerReplay(snapshot, 0);
    assertThat(late.digests().origins().get("in-1"))
        .as("q0 decoding, q2 prefilling, as on the origin")
        .isEqualTo(ReservationPlaneTest.openAfterOriginEvents(origin));
    overTheWire(List.of(origin.released("q0", 0))).forEach(e -> late.applyPeer(e, 0));
    assertThat(late.openReservations()).as("q2 only").isEqualTo(1);
    assertThat(late.digests().origins().get("in-1"))
        .isEqualTo(origin.digests().origins().get("in-1"));
  }

  /**
   * A rolling upgrade: this version's tracker applies the full form of an origin of the earlier
   * version (its reservations named by request id, the records 0.1.0 writes, which {@code
   * WireCompatibilityTest} decodes from 0.1.0's pinned bytes) beside a compact origin's events.
   */
  @Test
  void newTracker_appliesAnOldOriginsFullForm_besideACompactOrigin() {
    KvTrackerCore oldOrigin = tracker("in-1", "a", "b"); // names by request id, as 0.1.0 did
    KvTrackerCore newOrigin = compactTracker("in-3");
    KvTrackerCore peer = compactTracker("in-2");
    List<ReservationEvent> full = ReservationPlaneTest.originEvents(oldOrigin);
    assertThat(full.get(3)).isEqualTo(new PrefillCompleted("in-1", 3, "q0"));
    full.forEach(e -> peer.applyPeer(e, 0));
    overTheWire(ReservationPlaneTest.originEvents(newOrigin)).forEach(e -> peer.applyPeer(e, 0));

    assertThat(peer.digests().origins().get("in-1"))
        .isEqualTo(oldOrigin.digests().origins().get("in-1"));
    assertThat(peer.digests().origins().get("in-3"))
        .isEqualTo(newOrigin.digests().origins().get("in-3"));
    assertThat(peer.openReservations()).isEqualTo(4);
    peer.applyPeer(oldOrigin.released("q0", 0), 0);
    peer.applyPeer(oldOrigin.released("q2", 0), 0);
    assertThat(peer.openReservations()).as("the compact origin's two").isEqualTo(2);
  }

  @Test
  void encode_refusesAnEventNamedByRequestId() {
    Decision d =
        tracker("in-1", "a")
            .selectAndReserve(new RouteRequest("q0", MODEL, KEYS.keys(tokens(64, 1)), 64), 0);
    assertThatThrownBy(() -> new ReservationCodec(UID).encode(d.reserved()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("q0");
  }
}

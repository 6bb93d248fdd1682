package io.kvrouter.tracker.sync;

import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.CompactPrefillCompleted;
import io.kvrouter.protocol.CompactReleased;
import io.kvrouter.protocol.CompactReservationEvent;
import io.kvrouter.protocol.CompactReserved;
import io.kvrouter.protocol.PrefillCompleted;
import io.kvrouter.protocol.Released;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.Reserved;

/**
 * The one place where a reservation event as the tracker keeps and applies it (a {@link
 * ReservationEvent}) and its compact wire form (a {@link CompactReservationEvent}, sizes there)
 * meet.
 *
 * <p>Two names change on the way. The origin: its address string (the tracker's ingress id) on one
 * side, its cluster member's uid on the wire; which member a uid is, is the caller's to resolve (it
 * has the membership), and an event whose uid no member has is the caller's to drop: the origin's
 * next mark shows the gap and a replay, which names the origin by address, fills it. The
 * reservation: the compact wire names it by the seq of its {@code Reserved} (a {@code
 * PrefillCompleted} or {@code Released} carries how many seqs back that was), and the tracker calls
 * it {@link #peerName peerName(seq)}, {@code "#" + seq}: the origin's own log names its events so
 * ({@link OwnReservationLog}), so every peer, whether it got the events live, replayed or in a
 * snapshot, names a reservation alike. Names are per origin, and an origin names all its
 * reservations one way (its tracker's setting), so a peer name never meets a request id.
 *
 * <p>Not carried, because no peer reads them ({@code Placement.applyReservation}): the anchor key
 * (decoded as {@link BlocksStored#ROOT}) and the lease (decoded as 0: a peer keeps no lease on
 * another origin's reservation). Immutable, so thread-safe.
 */
public final class ReservationCodec {

  private static final String PEER_NAME_PREFIX = "#";

  private final long selfUid;

  /**
   * @param selfUid this node's cluster member uid, stamped as the origin of what it encodes
   */
  public ReservationCodec(long selfUid) {
    this.selfUid = selfUid;
  }

  /** The name of the reservation whose {@code Reserved} had seq {@code reservedSeq}. */
  public static String peerName(long reservedSeq) {
    return PEER_NAME_PREFIX + reservedSeq;
  }

  /** The seq a {@link #peerName} names. */
  static long reservedSeqOf(String peerName) {
    if (!peerName.startsWith(PEER_NAME_PREFIX)) {
      throw new IllegalArgumentException(
          "not named by seq (the tracker must name its reservations by seq for the compact wire): "
              + peerName);
    }
    return Long.parseLong(peerName.substring(PEER_NAME_PREFIX.length()));
  }

  /**
   * The compact form of an own event as the peers see it (named by seq: {@link OwnReservationLog}).
   *
   * @throws IllegalArgumentException when the event is named by request id
   */
  public CompactReservationEvent encode(ReservationEvent event) {
    long reservedSeq = reservedSeqOf(event.requestId());
    if (event instanceof Reserved r) {
      if (reservedSeq != r.seq()) {
        throw new IllegalArgumentException("a Reserved is named by its own seq: " + r);
      }
      return new CompactReserved(
          selfUid,
          r.seq(),
          r.replicaId(),
          r.prefillTokens(),
          r.promptTokens(),
          CompactReserved.pack(r.newKeys()),
          r.issuedMillis());
    }
    long since = event.seq() - reservedSeq;
    return event instanceof PrefillCompleted
        ? new CompactPrefillCompleted(selfUid, event.seq(), since)
        : new CompactReleased(selfUid, event.seq(), since);
  }

  /**
   * The event a compact one stands for, from {@code origin} (the ingress id its uid resolved to).
   */
  public static ReservationEvent decode(CompactReservationEvent event, String origin) {
    if (event instanceof CompactReserved r) {
      return new Reserved(
          origin,
          r.seq(),
          peerName(r.seq()),
          r.replicaId(),
          r.prefillTokens(),
          r.promptTokens(),
          BlocksStored.ROOT,
          r.keys(),
          0L,
          r.issuedMillis());
    }
    if (event instanceof CompactPrefillCompleted p) {
      return new PrefillCompleted(origin, p.seq(), peerName(p.seq() - p.sinceReserved()));
    }
    CompactReleased released = (CompactReleased) event;
    return new Released(
        origin, released.seq(), peerName(released.seq() - released.sinceReserved()));
  }
}

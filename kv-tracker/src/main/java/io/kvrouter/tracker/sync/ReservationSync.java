package io.kvrouter.tracker.sync;

import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.ReservationMark;
import io.kvrouter.protocol.ReservationReplay;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.LongFunction;

/**
 * One tracker's side of the reservation plane: its own events, numbered 0, 1, 2, ... by one counter
 * (the {@link OwnReservationLog}'s) and kept so that peers can catch up, and its peers' events, put
 * back in each origin's order ({@link PeerSequencer}) before the caller applies them. What to do
 * with an event in order (enter it in the ledger, predict its blocks) is the caller's, passed in as
 * a function; this class only decides the order, the gaps and the catch-up.
 *
 * <p>Own events echoed back by the broadcast are ignored everywhere. Cost: see {@link
 * PeerSequencer} and {@link OwnReservationLog}. Not thread-safe: the tracker's owner calls it.
 */
public final class ReservationSync {

  /** "No gap": every event that could be applied was. */
  public static final long NO_GAP = PeerSequencer.Offer.NO_GAP;

  /** Own events kept for peers' replays before they get a snapshot instead. */
  private static final int OWN_LOG_CAPACITY = 1 << 16;

  /** Early events of one peer held until the missing ones come. */
  private static final int MAX_EARLY_PER_PEER = 256;

  private final String self;
  private final OwnReservationLog own;
  private final PeerSequencer peers = new PeerSequencer(MAX_EARLY_PER_PEER);

  /**
   * @param self this tracker's ingress id (the origin of its own events)
   */
  public ReservationSync(String self) {
    this(self, false);
  }

  /**
   * @param self this tracker's ingress id (the origin of its own events)
   * @param namesBySeq true: own reservations are named towards the peers by the seq of their {@code
   *     Reserved}, as the compact reservation wire needs ({@link ReservationCodec}); false: by
   *     request id
   */
  public ReservationSync(String self, boolean namesBySeq) {
    this.self = self;
    this.own = new OwnReservationLog(self, OWN_LOG_CAPACITY, namesBySeq);
  }

  // ---------------------------------------------------------------- own events

  /**
   * Makes an own event with the next seq, records it for replays and returns it as the peers see it
   * (to broadcast; named as the {@link OwnReservationLog} says).
   *
   * @param stamped builds the event, named by its request id, from its seq
   */
  @SuppressWarnings("unchecked") // a named copy is of the event's own class
  public <E extends ReservationEvent> E originate(LongFunction<E> stamped) {
    return (E) own.record(stamped.apply(own.nextSeq()));
  }

  /** What a peer that expects {@code fromSeq} of this tracker's events next needs. */
  public ReservationReplay ownReplay(long fromSeq) {
    return own.replayFrom(fromSeq);
  }

  /** This tracker's next own seq (for its heartbeat). */
  public ReservationMark ownMark() {
    return new ReservationMark(self, own.nextSeq());
  }

  /** True when {@code origin} is this tracker. */
  public boolean isSelf(String origin) {
    return origin.equals(self);
  }

  // ---------------------------------------------------------------- peers' events

  /**
   * A peer's event as it arrived: hands every event now in order to {@code apply} and returns the
   * seq to ask the origin to replay from when earlier ones are missing, or {@link #NO_GAP}.
   */
  public long offer(ReservationEvent event, Consumer<ReservationEvent> apply) {
    if (isSelf(event.ingressId())) {
      return NO_GAP;
    }
    PeerSequencer.Offer offer = peers.offer(event);
    offer.ready().forEach(apply);
    return offer.gapFromSeq();
  }

  /**
   * An origin's answer to a replay request. Its events from a seq go through {@link #offer}; a
   * snapshot first has {@code dropOrigin} forget the origin's reservations, then hands the
   * snapshot's events and the held ones that now follow to {@code apply}.
   */
  public void replayed(
      ReservationReplay replay, Consumer<String> dropOrigin, Consumer<ReservationEvent> apply) {
    if (isSelf(replay.origin())) {
      return;
    }
    if (!replay.snapshot()) {
      for (ReservationEvent e : replay.events()) {
        offer(e, apply);
      }
      return;
    }
    dropOrigin.accept(replay.origin());
    for (ReservationEvent e : replay.events()) {
      apply.accept(e);
    }
    peers.resetTo(replay.origin(), replay.nextSeq()).forEach(apply);
  }

  /** An origin's heartbeat: the seq to replay from when this tracker is behind it, or NO_GAP. */
  public long behind(ReservationMark mark) {
    if (isSelf(mark.ingressId())) {
      return NO_GAP;
    }
    return peers.behind(mark.ingressId(), mark.nextSeq());
  }

  /** A peer ingress left: its sequence is forgotten (a new incarnation starts again at 0). */
  public void forget(String origin) {
    peers.forget(origin);
  }

  // ---------------------------------------------------------------- view

  /** This tracker and every peer it has heard of, sorted. */
  public Set<String> origins() {
    Set<String> origins = new TreeSet<>(peers.origins());
    origins.add(self);
    return origins;
  }

  /** The last seq applied of {@code origin} (for this tracker: the last it made), or -1. */
  public long lastSeq(String origin) {
    return isSelf(origin) ? own.nextSeq() - 1 : peers.lastApplied(origin);
  }
}

package io.kvrouter.tracker.sync;

import io.kvrouter.protocol.PrefillCompleted;
import io.kvrouter.protocol.Released;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.ReservationReplay;
import io.kvrouter.protocol.Reserved;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * This tracker's own reservation events, kept so peers that missed some can catch up: the last
 * {@code capacity} events in seq order (a ring), and the reservations still open with their phase.
 * A peer asking from a seq the ring still holds gets those events; one asking from further back
 * gets a snapshot of the open reservations instead.
 *
 * <p>It keeps each event as the peers see it. By request id (0.1.0's naming), that is the event
 * itself. By seq (the compact reservation wire's naming, {@link ReservationCodec}), a reservation
 * is named after the seq of its {@code Reserved} in every event of it, here as on the wire, so that
 * a replay or a snapshot names it as the live events did; the origin's own bookkeeping keeps the
 * request id.
 *
 * <p>Cost: O(1) per recorded event; a replay copies the events asked for; a snapshot copies the
 * open reservations. Memory: one reference per ring slot plus one entry per open reservation. Not
 * thread-safe (owned by the tracker actor).
 */
public final class OwnReservationLog {

  private final String origin;
  private final boolean namesBySeq;
  private final ReservationEvent[] ring;
  private long firstSeq; // seq of the oldest event still in the ring
  private long nextSeq; // seq the next recorded event must carry
  // By the origin's request id, each as the peers see it.
  private final Map<String, Reserved> open = new LinkedHashMap<>();
  private final Map<String, PrefillCompleted> prefilled = new LinkedHashMap<>();

  /** A log whose events name reservations by request id, as 0.1.0's did. */
  public OwnReservationLog(String origin, int capacity) {
    this(origin, capacity, false);
  }

  /**
   * @param namesBySeq true: peers name a reservation by the seq of its {@code Reserved} ({@link
   *     ReservationCodec#peerName}); false: by its request id
   */
  public OwnReservationLog(String origin, int capacity, boolean namesBySeq) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be positive, was " + capacity);
    }
    this.origin = origin;
    this.namesBySeq = namesBySeq;
    this.ring = new ReservationEvent[capacity];
  }

  /**
   * Records an event this tracker just made (named by its request id); seqs must come 0, 1, 2, ...
   * Returns the event as the peers see it, to broadcast.
   */
  public ReservationEvent record(ReservationEvent event) {
    if (event.seq() != nextSeq) {
      throw new IllegalArgumentException("expected seq " + nextSeq + ", got " + event.seq());
    }
    ReservationEvent sent = namesBySeq ? namedBySeq(event) : event;
    ring[(int) (nextSeq % ring.length)] = sent;
    nextSeq++;
    if (nextSeq - firstSeq > ring.length) {
      firstSeq = nextSeq - ring.length;
    }
    if (event instanceof Reserved r) {
      open.put(r.requestId(), (Reserved) sent);
    } else if (event instanceof PrefillCompleted p) {
      if (open.containsKey(p.requestId())) {
        prefilled.put(p.requestId(), (PrefillCompleted) sent);
      }
    } else if (event instanceof Released rel) {
      open.remove(rel.requestId());
      prefilled.remove(rel.requestId());
    }
    return sent;
  }

  /**
   * The event with its reservation named by the seq of its {@code Reserved}. An event of a
   * reservation this log does not hold open (none is made so) is named after its own seq, which no
   * reservation has, so it changes nothing at the peers, as it would not by request id.
   */
  private ReservationEvent namedBySeq(ReservationEvent event) {
    if (event instanceof Reserved r) {
      return new Reserved(
          r.ingressId(),
          r.seq(),
          ReservationCodec.peerName(r.seq()),
          r.replicaId(),
          r.prefillTokens(),
          r.promptTokens(),
          r.anchorKey(),
          r.newKeys(),
          r.leaseMillis(),
          r.issuedMillis());
    }
    Reserved of = open.get(event.requestId());
    String name = ReservationCodec.peerName(of == null ? event.seq() : of.seq());
    return event instanceof PrefillCompleted
        ? new PrefillCompleted(event.ingressId(), event.seq(), name)
        : new Released(event.ingressId(), event.seq(), name);
  }

  /** The seq the next event will carry. */
  public long nextSeq() {
    return nextSeq;
  }

  /** What a peer that expects {@code fromSeq} next needs to catch up. */
  public ReservationReplay replayFrom(long fromSeq) {
    if (fromSeq >= firstSeq && fromSeq <= nextSeq) {
      List<ReservationEvent> events = new ArrayList<>((int) (nextSeq - fromSeq));
      for (long s = fromSeq; s < nextSeq; s++) {
        events.add(ring[(int) (s % ring.length)]);
      }
      return new ReservationReplay(origin, false, nextSeq, events.toArray(ReservationEvent[]::new));
    }
    List<ReservationEvent> events = new ArrayList<>(open.size() + prefilled.size());
    for (Map.Entry<String, Reserved> r : open.entrySet()) {
      events.add(r.getValue());
      PrefillCompleted p = prefilled.get(r.getKey());
      if (p != null) {
        events.add(p);
      }
    }
    return new ReservationReplay(origin, true, nextSeq, events.toArray(ReservationEvent[]::new));
  }
}

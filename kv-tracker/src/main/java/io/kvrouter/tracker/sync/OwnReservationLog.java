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
 * <p>Cost: O(1) per recorded event; a replay copies the events asked for; a snapshot copies the
 * open reservations. Memory: one reference per ring slot plus one entry per open reservation. Not
 * thread-safe (owned by the tracker actor).
 */
public final class OwnReservationLog {

  private final String origin;
  private final ReservationEvent[] ring;
  private long firstSeq; // seq of the oldest event still in the ring
  private long nextSeq; // seq the next recorded event must carry
  private final Map<String, Reserved> open = new LinkedHashMap<>();
  private final Map<String, PrefillCompleted> prefilled = new LinkedHashMap<>();

  public OwnReservationLog(String origin, int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be positive, was " + capacity);
    }
    this.origin = origin;
    this.ring = new ReservationEvent[capacity];
  }

  /** Records an event this tracker just broadcast; seqs must come 0, 1, 2, ... */
  public void record(ReservationEvent event) {
    if (event.seq() != nextSeq) {
      throw new IllegalArgumentException("expected seq " + nextSeq + ", got " + event.seq());
    }
    ring[(int) (nextSeq % ring.length)] = event;
    nextSeq++;
    if (nextSeq - firstSeq > ring.length) {
      firstSeq = nextSeq - ring.length;
    }
    if (event instanceof Reserved r) {
      open.put(r.requestId(), r);
    } else if (event instanceof PrefillCompleted p) {
      if (open.containsKey(p.requestId())) {
        prefilled.put(p.requestId(), p);
      }
    } else if (event instanceof Released rel) {
      open.remove(rel.requestId());
      prefilled.remove(rel.requestId());
    }
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
    for (Reserved r : open.values()) {
      events.add(r);
      PrefillCompleted p = prefilled.get(r.requestId());
      if (p != null) {
        events.add(p);
      }
    }
    return new ReservationReplay(origin, true, nextSeq, events.toArray(ReservationEvent[]::new));
  }
}

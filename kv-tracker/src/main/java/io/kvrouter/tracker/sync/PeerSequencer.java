package io.kvrouter.tracker.sync;

import io.kvrouter.protocol.ReservationEvent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Puts each peer ingress's reservation events back in seq order: an event is released for applying
 * only when it is the origin's next one; a later one waits in a small buffer (a few reordered
 * messages repair themselves) and reports a gap (so the origin is asked to replay); an earlier one
 * is a duplicate and is dropped. Applying an origin's events in this order makes a tracker's view
 * of that origin a pure function of the prefix it applied.
 *
 * <p>Cost: O(log b) per event with b buffered events of that origin; at most {@code maxBuffered}
 * buffered per origin (beyond that the newest are dropped and recovered by the replay). Not
 * thread-safe.
 */
public final class PeerSequencer {

  /** What became of one offered event. */
  public record Offer(List<ReservationEvent> ready, long gapFromSeq) {

    /** No gap: every event that can be applied is in {@code ready}. */
    public static final long NO_GAP = -1;

    public boolean gap() {
      return gapFromSeq != NO_GAP;
    }
  }

  private final int maxBuffered;
  private final Map<String, Long> expected = new HashMap<>();
  private final Map<String, TreeMap<Long, ReservationEvent>> pending = new HashMap<>();

  public PeerSequencer(int maxBuffered) {
    this.maxBuffered = maxBuffered;
  }

  /** Offers an event as it arrived; returns the events now ready, in order, and any gap. */
  public Offer offer(ReservationEvent event) {
    String origin = event.ingressId();
    long next = expected.getOrDefault(origin, 0L);
    if (event.seq() < next) {
      return new Offer(List.of(), Offer.NO_GAP);
    }
    if (event.seq() > next) {
      TreeMap<Long, ReservationEvent> buffer =
          pending.computeIfAbsent(origin, o -> new TreeMap<>());
      if (buffer.size() < maxBuffered) {
        buffer.put(event.seq(), event);
      }
      return new Offer(List.of(), next);
    }
    List<ReservationEvent> ready = new ArrayList<>();
    ready.add(event);
    expected.put(origin, next + 1);
    drain(origin, ready);
    return new Offer(ready, Offer.NO_GAP);
  }

  /**
   * The origin said its next seq is {@code nextSeq} (a heartbeat, or a snapshot's end): returns the
   * seq to replay from when this tracker is behind it, or {@link Offer#NO_GAP}.
   */
  public long behind(String origin, long nextSeq) {
    long next = expected.getOrDefault(origin, 0L);
    return next < nextSeq ? next : Offer.NO_GAP;
  }

  /** After a snapshot of the origin: expect {@code nextSeq}; returns buffered events now ready. */
  public List<ReservationEvent> resetTo(String origin, long nextSeq) {
    expected.put(origin, nextSeq);
    TreeMap<Long, ReservationEvent> buffer = pending.get(origin);
    if (buffer != null) {
      buffer.headMap(nextSeq).clear();
    }
    List<ReservationEvent> ready = new ArrayList<>();
    drain(origin, ready);
    return ready;
  }

  /** The origin left the cluster: forget it (a new incarnation starts again at 0). */
  public void forget(String origin) {
    expected.remove(origin);
    pending.remove(origin);
  }

  /** The last seq applied of {@code origin}, or -1. */
  public long lastApplied(String origin) {
    return expected.getOrDefault(origin, 0L) - 1;
  }

  /** Every origin this sequencer has seen. */
  public java.util.Set<String> origins() {
    return java.util.Set.copyOf(expected.keySet());
  }

  private void drain(String origin, List<ReservationEvent> ready) {
    TreeMap<Long, ReservationEvent> buffer = pending.get(origin);
    if (buffer == null) {
      return;
    }
    long next = expected.get(origin);
    ReservationEvent e;
    while ((e = buffer.remove(next)) != null) {
      ready.add(e);
      next++;
    }
    expected.put(origin, next);
    if (buffer.isEmpty()) {
      pending.remove(origin);
    }
  }
}

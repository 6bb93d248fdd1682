package io.kvrouter.protocol;

import java.util.Arrays;
import java.util.Objects;

/**
 * An origin tracker's answer to {@link ReplayReservations}.
 *
 * <p>Replay ({@code snapshot == false}): {@code events} are the origin's events from the asked seq,
 * in seq order. Snapshot ({@code snapshot == true}): drop everything of this origin, apply {@code
 * events} (a Reserved, maybe followed by its PrefillCompleted, per open reservation; their seqs are
 * not meaningful) and expect {@code nextSeq} next. The array is never mutated after the record is
 * built.
 */
public record ReservationReplay(
    String origin, boolean snapshot, long nextSeq, ReservationEvent[] events) implements KryoWire {

  @Override
  public boolean equals(Object o) {
    return o instanceof ReservationReplay r
        && snapshot == r.snapshot
        && nextSeq == r.nextSeq
        && origin.equals(r.origin)
        && Arrays.equals(events, r.events);
  }

  @Override
  public int hashCode() {
    return Objects.hash(origin, snapshot, nextSeq, Arrays.hashCode(events));
  }

  @Override
  public String toString() {
    return "ReservationReplay["
        + origin
        + ", snapshot="
        + snapshot
        + ", next="
        + nextSeq
        + ", events="
        + events.length
        + "]";
  }
}

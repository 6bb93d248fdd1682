package io.kvrouter.protocol;

/**
 * The compact wire form of {@link PrefillCompleted}: the reservation is the one whose {@link
 * CompactReserved} came {@code sinceReserved} seqs earlier in the same origin's stream (1 or more;
 * a small number, one byte on the wire for up to 63 events in between). About 14 bytes.
 */
public record CompactPrefillCompleted(long origin, long seq, long sinceReserved)
    implements CompactReservationEvent {}

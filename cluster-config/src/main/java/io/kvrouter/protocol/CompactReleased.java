package io.kvrouter.protocol;

/**
 * The compact wire form of {@link Released}: the reservation is the one whose {@link
 * CompactReserved} came {@code sinceReserved} seqs earlier in the same origin's stream. About 14
 * bytes.
 */
public record CompactReleased(long origin, long seq, long sinceReserved)
    implements CompactReservationEvent {}

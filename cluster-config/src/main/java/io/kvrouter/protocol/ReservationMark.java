package io.kvrouter.protocol;

/**
 * A tracker's periodic note of its next reservation seq: a peer behind it missed events even when
 * no later event comes to show the gap.
 */
public record ReservationMark(String ingressId, long nextSeq) implements KryoWire {}

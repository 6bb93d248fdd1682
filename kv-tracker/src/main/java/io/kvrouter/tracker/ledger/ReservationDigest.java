package io.kvrouter.tracker.ledger;

/**
 * Order-independent digest of the reservations one origin ingress holds in a ledger: how many, and
 * the wrapping sum of a 64-bit mix of each (request id, replica id, token counts, phase).
 */
public record ReservationDigest(long count, long sum) {

  public static final ReservationDigest EMPTY = new ReservationDigest(0, 0);
}

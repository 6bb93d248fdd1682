package io.kvrouter.protocol;

/**
 * The compact wire form of a {@link ReservationEvent} (since 0.2.0), on its own topic ({@link
 * Topics#RESERVATIONS_COMPACT}): the origin named by a number instead of its address, a reservation
 * named by the seq of its {@link CompactReserved} instead of a request id, and only what a peer
 * reads. Sizes as {@code KryoSerializer} writes them ({@code ReservationWireSizeTest} measures
 * them), for a typical request: {@link CompactReserved} 28 bytes plus 8 per new block key (class id
 * 2, origin 9, seq 2, issue time 6, token counts 3, replica id its characters: 5 for {@code sim-0},
 * key count 1); {@link CompactPrefillCompleted} and {@link CompactReleased} 14 each (class id 2,
 * origin 9, seq 2, distance to the reservation's seq 1). So 56 bytes plus 8 per new block per
 * routed request and peer, against 264 plus 9 to 10 per new block in the full form, which carries
 * the origin's address and the request id in each of the three events. (A random 64-bit uid takes 9
 * or 10 bytes as a Kryo varint; seqs below 8,192 take 2.) {@code load-tests/bench/planes.sh}
 * measures the traffic per routed request and peer.
 *
 * <p>Which origin a number names and which name a peer gives the reservation are the tracker's
 * business (its reservation codec); these records only carry them.
 */
public sealed interface CompactReservationEvent extends KryoWire
    permits CompactReserved, CompactPrefillCompleted, CompactReleased {

  /**
   * The origin ingress, as the Pekko {@code UniqueAddress.longUid} of its cluster member: unique
   * per incarnation, so a restarted ingress (same address, new uid) is never taken for its former
   * self.
   */
  long origin();

  /** 0, 1, 2, ... per origin ingress, without gaps: the same seq the full form would carry. */
  long seq();
}

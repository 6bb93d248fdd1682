package io.kvrouter.protocol;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * The compact wire form of {@link Reserved}: what a peer reads of a reservation, nothing else. The
 * later events of the reservation name it by this event's {@code seq}, so no request id travels.
 * Left out because no peer reads them: the request id, the anchor key (peers predict the new keys
 * as they are) and the lease (a peer keeps no lease on another origin's reservation: the origin
 * ends it).
 *
 * <p>{@code newKeys} are packed 8 bytes each, big-endian: block keys are uniformly random 64-bit
 * hashes, which Kryo's variable-length longs would write in 9 or 10 bytes. Size: 28 bytes plus 8
 * per new key for a typical request (see {@link CompactReservationEvent}). The array is never
 * mutated after the record is built.
 *
 * @param origin the origin's member uid (see {@link CompactReservationEvent#origin})
 * @param seq this event's seq in the origin's stream, and the reservation's name
 * @param replicaId the chosen replica's target id
 * @param prefillTokens prompt tokens the replica must still prefill (uncached part)
 * @param promptTokens all prompt tokens of the request
 * @param newKeys the block keys the replica lacks, packed by {@link #pack}
 * @param issuedMillis when the origin made it (its wall clock; 0 when unknown)
 */
public record CompactReserved(
    long origin,
    long seq,
    String replicaId,
    int prefillTokens,
    int promptTokens,
    byte[] newKeys,
    long issuedMillis)
    implements CompactReservationEvent {

  public CompactReserved {
    Objects.requireNonNull(replicaId, "replicaId");
    Objects.requireNonNull(newKeys, "newKeys");
    if (newKeys.length % Long.BYTES != 0) {
      throw new IllegalArgumentException(
          "newKeys must be whole 8-byte keys, was " + newKeys.length + " bytes");
    }
  }

  /** Packs block keys 8 bytes each, big-endian, as {@code newKeys} carries them. */
  public static byte[] pack(long[] keys) {
    ByteBuffer b = ByteBuffer.allocate(keys.length * Long.BYTES);
    for (long k : keys) {
      b.putLong(k);
    }
    return b.array();
  }

  /** The new block keys, unpacked. */
  public long[] keys() {
    ByteBuffer b = ByteBuffer.wrap(newKeys);
    long[] keys = new long[newKeys.length / Long.BYTES];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = b.getLong();
    }
    return keys;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CompactReserved r
        && origin == r.origin
        && seq == r.seq
        && prefillTokens == r.prefillTokens
        && promptTokens == r.promptTokens
        && issuedMillis == r.issuedMillis
        && replicaId.equals(r.replicaId)
        && Arrays.equals(newKeys, r.newKeys);
  }

  @Override
  public int hashCode() {
    return Objects.hash(origin, seq, replicaId, Arrays.hashCode(newKeys));
  }

  @Override
  public String toString() {
    return "CompactReserved["
        + Long.toHexString(origin)
        + "#"
        + seq
        + " -> "
        + replicaId
        + ", prefill="
        + prefillTokens
        + ", newKeys="
        + newKeys.length / Long.BYTES
        + "]";
  }
}

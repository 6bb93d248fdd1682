package io.kvrouter.protocol;

import java.util.Arrays;
import java.util.Objects;

/**
 * A select-and-reserve decision: {@code replicaId} is about to serve {@code requestId}.
 *
 * <p>To keep bandwidth small it carries only the keys the replica does not hold yet, chained under
 * {@code anchorKey} (the last key it does hold, or {@link BlocksStored#ROOT}). Peers index them as
 * predicted entries until the engine's own event confirms them or the lease ends. The array is
 * never mutated after the record is built.
 *
 * @param prefillTokens prompt tokens the replica must still prefill (uncached part)
 * @param promptTokens all prompt tokens of the request
 * @param leaseMillis how long the reservation holds if never released
 * @param issuedMillis when the origin tracker made it (its wall clock; 0 when unknown), for the
 *     reservation-propagation metric
 */
public record Reserved(
    String ingressId,
    long seq,
    String requestId,
    String replicaId,
    int prefillTokens,
    int promptTokens,
    long anchorKey,
    long[] newKeys,
    long leaseMillis,
    long issuedMillis)
    implements ReservationEvent {

  /** A reservation without an issue time. */
  public Reserved(
      String ingressId,
      long seq,
      String requestId,
      String replicaId,
      int prefillTokens,
      int promptTokens,
      long anchorKey,
      long[] newKeys,
      long leaseMillis) {
    this(
        ingressId,
        seq,
        requestId,
        replicaId,
        prefillTokens,
        promptTokens,
        anchorKey,
        newKeys,
        leaseMillis,
        0L);
  }

  public Reserved {
    Objects.requireNonNull(ingressId, "ingressId");
    Objects.requireNonNull(requestId, "requestId");
    Objects.requireNonNull(replicaId, "replicaId");
    Objects.requireNonNull(newKeys, "newKeys");
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Reserved r
        && seq == r.seq
        && prefillTokens == r.prefillTokens
        && promptTokens == r.promptTokens
        && anchorKey == r.anchorKey
        && leaseMillis == r.leaseMillis
        && ingressId.equals(r.ingressId)
        && requestId.equals(r.requestId)
        && replicaId.equals(r.replicaId)
        && Arrays.equals(newKeys, r.newKeys);
  }

  @Override
  public int hashCode() {
    return Objects.hash(ingressId, seq, requestId, replicaId, Arrays.hashCode(newKeys));
  }

  @Override
  public String toString() {
    return "Reserved["
        + ingressId
        + "#"
        + seq
        + ", "
        + requestId
        + " -> "
        + replicaId
        + ", prefill="
        + prefillTokens
        + ", newKeys="
        + newKeys.length
        + "]";
  }
}

package io.kvrouter.tracker.ledger;

/**
 * One request's claim on one replica, from select-and-reserve (or a peer's {@code Reserved}) until
 * released or its lease ends.
 *
 * @param origin the ingress that made the decision
 * @param requestId unique per origin
 * @param replicaId the replica's target id (what the origin named; digests use it)
 * @param replica the replica's index in this tracker, or {@link #DETACHED} while this tracker does
 *     not know the replica (not announced yet, or gone): such a reservation stays in its origin's
 *     digest but weighs on no replica's load
 * @param promptTokens all prompt tokens
 * @param prefillTokens the uncached part the replica must prefill
 * @param decoding true once {@code PrefillCompleted} arrived
 * @param leaseDeadline when the ledger drops it if never released (millis, tracker clock)
 * @param predictedKeys the blocks the reservation predicts the replica will hold (its {@code
 *     Reserved}'s new keys; never mutated), so their predicted entries can be retired once the
 *     engine had its chance to confirm them
 */
public record Reservation(
    String origin,
    String requestId,
    String replicaId,
    int replica,
    int promptTokens,
    int prefillTokens,
    boolean decoding,
    long leaseDeadline,
    long[] predictedKeys) {

  /** The {@link #replica} of a reservation on a replica this tracker does not know. */
  public static final int DETACHED = -1;

  /** True when the reservation weighs on a replica's load here. */
  public boolean attached() {
    return replica != DETACHED;
  }

  Reservation withReplica(int index) {
    return new Reservation(
        origin,
        requestId,
        replicaId,
        index,
        promptTokens,
        prefillTokens,
        decoding,
        leaseDeadline,
        predictedKeys);
  }

  Reservation decodingNow() {
    return new Reservation(
        origin,
        requestId,
        replicaId,
        replica,
        promptTokens,
        prefillTokens,
        true,
        leaseDeadline,
        predictedKeys);
  }
}

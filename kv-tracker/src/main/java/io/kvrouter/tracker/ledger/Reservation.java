package io.kvrouter.tracker.ledger;

/**
 * One request's claim on one replica, from select-and-reserve (or a peer's {@code Reserved}) until
 * released or its lease ends.
 *
 * @param origin the ingress that made the decision
 * @param requestId unique per origin
 * @param replica replica index
 * @param promptTokens all prompt tokens
 * @param prefillTokens the uncached part the replica must prefill
 * @param decoding true once {@code PrefillCompleted} arrived
 * @param leaseDeadline when the ledger drops it if never released (millis, tracker clock)
 */
public record Reservation(
    String origin,
    String requestId,
    int replica,
    int promptTokens,
    int prefillTokens,
    boolean decoding,
    long leaseDeadline) {}

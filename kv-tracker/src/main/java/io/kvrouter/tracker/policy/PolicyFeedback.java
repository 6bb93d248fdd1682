package io.kvrouter.tracker.policy;

/**
 * What a policy that learns from outcomes hears from its tracker, beyond {@link Policy}: its own
 * router's id, its own requests' placement, first token and end, and its peers' reservations. The
 * tracker calls these on policies that implement this interface, in the order the events happen,
 * with the tracker's clock. Implementations are not thread-safe (one tracker owns a policy).
 */
public interface PolicyFeedback {

  /** The id of the router (ingress) this policy decides for, before its first decision. */
  void bind(String selfId);

  /** EXPERIMENT: milliseconds to wait before deciding, or 0. */
  default long deferMillis(RouteQuery query, int chosen, long nowMillis) {
    return 0;
  }

  default void experimentDeferred(boolean deferred) {}

  /** This router placed {@code requestId} on {@code replica} (right after {@link Policy#rank}). */
  void placed(String requestId, RouteQuery query, int replica);

  /** The first token of an own request arrived. */
  void firstToken(String requestId, long nowMillis);

  /** An own request ended (released or expired); forget what was kept about it. */
  void ended(String requestId);

  /**
   * A peer router's reservation arrived: it placed a request of {@code promptTokens}, {@code
   * prefillTokens} of them uncached, on {@code replica} at {@code issuedMillis} (its clock; 0 when
   * unknown).
   */
  void peerPlaced(
      String origin,
      int replica,
      int prefillTokens,
      int promptTokens,
      long issuedMillis,
      long nowMillis);
}

package io.kvrouter.tracker.policy;

/**
 * A policy's capability to learn from the other routers and from the replicas' lives: it knows
 * which router it decides for, hears every peer's reservations and marks, learns when a replica's
 * engine started afresh, and reports the lateness it charges a replica. The tracker calls these
 * only on a policy that implements this interface.
 */
public interface WatchesPeers {

  /** The id of the router this policy decides for, once, before its first decision. */
  void bindRouter(String routerId);

  /**
   * A peer router's reservation arrived at {@code nowMillis}: it placed a request of {@code
   * promptTokens}, {@code prefillTokens} of them uncached there, on {@code replica} at {@code
   * issuedMillis} (the peer's clock; 0 when unknown); {@code replica} is -1 for a replica this
   * tracker does not know yet. Called only when {@link Visibility#peerReservations()} shows peers'
   * reservations.
   */
  void onPeerReserved(
      String origin,
      int replica,
      int prefillTokens,
      int promptTokens,
      long issuedMillis,
      long nowMillis);

  /** A peer router's periodic mark arrived at {@code nowMillis}: {@code origin} is alive. */
  void onPeerHeard(String origin, long nowMillis);

  /**
   * The replica's stream began a new epoch: its engine restarted (or its agent did, or batches were
   * lost), and what the policy learned of the old engine may not hold for the new one.
   */
  void onReplicaStartedAfresh(int replica);

  /**
   * How much later than predicted this router's first tokens from {@code replica} have lately come,
   * ms, as the policy charges it at {@code nowMillis} (for operators: why a replica is passed
   * over).
   */
  double lagMillis(int replica, long nowMillis);
}

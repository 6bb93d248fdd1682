package io.kvrouter.tracker.policy;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;

/**
 * A routing policy: ranks candidate replicas for one request, best first. The caller routes to the
 * first and retries down the list. Plain Java, no clocks or threads of its own: time comes in the
 * query, randomness from the {@code RandomGenerator} it was built with, so the virtual-time lab can
 * run it deterministically.
 *
 * <p>This is what every policy needs. What only some do is a capability of its own, which the
 * tracker offers to a policy that implements it: {@link WatchesPeers} (peer routers and the
 * replicas' restarts), {@link HoldsDecisions} (waiting before a decision) and {@link SharesIntents}
 * (announcing held requests and a shared timing model). Policies that keep state of their own
 * (built from routed requests, not engine events) update it in {@link #onRouted}, called once per
 * placed request; the requests of this router are followed through {@link #onReserved}, {@link
 * #onPrefillCompleted} and {@link #onReleased}. Implementations are not thread-safe.
 */
public interface Policy {

  /** The name it is listed and created under ({@link Policies}). */
  String name();

  /**
   * Ranks {@code candidates} (replica indices, non-empty, no duplicates) best first.
   *
   * @param match the index's match of the query's keys (exact policies read it; approximate ones
   *     ignore it)
   * @param load per-replica load
   * @return a permutation of {@code candidates}
   */
  int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load);

  /** What the router may show this policy; kvrouter's own policy sees everything. */
  default Visibility visibility() {
    return Visibility.FULL;
  }

  /** The request was placed on {@code replica}. */
  default void onRouted(RouteQuery query, MatchResult match, int replica) {}

  /**
   * This router reserved {@code replica} for request {@code requestId} (right after {@link
   * #onRouted}).
   */
  default void onReserved(String requestId, RouteQuery query, int replica) {}

  /**
   * The first token of an own request arrived.
   *
   * @param nowMillis the tracker's clock, or a negative value when the caller has none
   */
  default void onPrefillCompleted(String requestId, long nowMillis) {}

  /**
   * An own request finished (or its lease ended); forget it.
   *
   * @param nowMillis the tracker's clock, or a negative value when the caller has none
   */
  default void onReleased(String requestId, long nowMillis) {}

  /** The replica left; forget what the policy kept about it. */
  default void onReplicaRemoved(int replica) {}
}

package io.kvrouter.ingress.routing;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * One {@link TrackerRouter} call's progress through strict mode's gates: the query (the caller's,
 * plus replicas gone from the directory since), the requests each gate that turned it away said it
 * holds, and how many times it was turned away. Immutable; each retry makes the next one, so a call
 * that ends (routed, busy, no replica, a failed ask) leaves nothing behind.
 *
 * <p>A gate that turns a request away is not excluded from the next decision: it is counted with
 * the requests it reported ({@link #gateCounts}), so the tracker weighs it as it will once the
 * other ingresses' reservations arrive, and takes it again when it is still the least loaded.
 * Excluding it for a round instead pushes a herding burst's last requests onto replicas busier than
 * the one that turned them away.
 *
 * @param query the caller's query, with the replicas gone from the directory excluded
 * @param gateCounts per replica that turned this request away, the requests its gate held then
 * @param turnedAway how many times a gate turned this request away
 */
record RouteAttempt(ReplicaQuery query, Map<String, Integer> gateCounts, int turnedAway) {

  /** The first attempt of a call. */
  static RouteAttempt first(ReplicaQuery query) {
    return new RouteAttempt(query, Map.of(), 0);
  }

  /** {@code replica} is gone from the directory: never again for this call. */
  RouteAttempt without(String replica) {
    Set<String> excluded = new HashSet<>(query.excluded());
    excluded.add(replica);
    return new RouteAttempt(query.withExcluded(excluded), gateCounts, turnedAway);
  }

  /** {@code replica}'s gate turned the request away, holding {@code held} requests. */
  RouteAttempt turnedAway(String replica, int held) {
    Map<String, Integer> counts = new HashMap<>(gateCounts);
    counts.merge(replica, held, Math::max);
    return new RouteAttempt(query, Map.copyOf(counts), turnedAway + 1);
  }

  /**
   * True when the gate must admit this attempt regardless: it was turned away {@code rounds} times
   * per each of its {@code candidates} (every turn-away raises a gate's count, so only a replica
   * whose count keeps rising faster than the router learns it gets here).
   */
  boolean forced(int candidates, int rounds) {
    return turnedAway >= rounds * Math.max(1, candidates);
  }
}

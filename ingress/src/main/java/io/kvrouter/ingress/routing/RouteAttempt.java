package io.kvrouter.ingress.routing;

import java.util.HashSet;
import java.util.Set;

/**
 * One {@link TrackerRouter} call's progress through strict mode's gate rounds: the caller's query,
 * the replicas whose gates turned it away in this round and the rounds already over. Immutable;
 * each retry makes the next one, so a call that ends (routed, busy, no replica, a failed ask)
 * leaves nothing behind.
 *
 * @param original the caller's query
 * @param rejected the replicas whose gates turned the request away in this round
 * @param round the rounds over every candidate already over
 */
record RouteAttempt(RouteQuery original, Set<String> rejected, int round) {

  /** The first attempt of a call. */
  static RouteAttempt first(RouteQuery query) {
    return new RouteAttempt(query, Set.of(), 0);
  }

  /** The query for the tracker: the caller's exclusions plus this round's rejections. */
  RouteQuery query() {
    if (rejected.isEmpty()) {
      return original;
    }
    Set<String> excluded = new HashSet<>(original.excluded());
    excluded.addAll(rejected);
    return original.withExcluded(excluded);
  }

  /** {@code replica} is gone from the directory: never again for this call. */
  RouteAttempt without(String replica) {
    Set<String> excluded = new HashSet<>(original.excluded());
    excluded.add(replica);
    return new RouteAttempt(original.withExcluded(excluded), rejected, round);
  }

  /**
   * {@code replica}'s gate turned the request away; when it was the {@code last} candidate, another
   * round starts over all of them.
   */
  RouteAttempt turnedAway(String replica, boolean last) {
    if (last) {
      return new RouteAttempt(original, Set.of(), round + 1);
    }
    Set<String> more = new HashSet<>(rejected);
    more.add(replica);
    return new RouteAttempt(original, Set.copyOf(more), round);
  }

  /**
   * True when the gate must admit this attempt regardless: its {@code last} candidate, after {@code
   * rounds} rounds turned away.
   */
  boolean forced(boolean last, int rounds) {
    return last && round >= rounds;
  }
}

package io.kvrouter.loadtest.baselines;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.RouteQuery;
import io.kvrouter.tracker.policy.Visibility;

/** {@code round_robin}: the next candidate in turn, ignoring cache and load. */
final class RoundRobinPolicy implements Policy {

  private long next;

  @Override
  public String name() {
    return "round_robin";
  }

  /** A plain load balancer: only the requests it sent itself. */
  @Override
  public Visibility visibility() {
    return Visibility.OWN_REQUESTS;
  }

  @Override
  public int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load) {
    int n = candidates.length;
    int start = (int) Math.floorMod(next++, (long) n);
    int[] out = new int[n];
    for (int i = 0; i < n; i++) {
      out[i] = candidates[(start + i) % n];
    }
    return out;
  }
}

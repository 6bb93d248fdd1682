package io.kvrouter.loadtest.baselines;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.Ranking;
import io.kvrouter.tracker.policy.RouteQuery;
import io.kvrouter.tracker.policy.Visibility;
import java.util.random.RandomGenerator;

/** {@code least_loaded}: fewest in-flight requests first, ties at random. */
final class LeastLoadedPolicy implements Policy {

  private final RandomGenerator random;

  LeastLoadedPolicy(RandomGenerator random) {
    this.random = random;
  }

  @Override
  public String name() {
    return "least_loaded";
  }

  /** A plain load balancer: only the requests it sent itself. */
  @Override
  public Visibility visibility() {
    return Visibility.OWN_REQUESTS;
  }

  @Override
  public int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load) {
    double[] cost = new double[candidates.length];
    for (int i = 0; i < candidates.length; i++) {
      cost[i] = load.inFlight(candidates[i]);
    }
    return Ranking.ascending(candidates, cost, random);
  }
}

package io.kvrouter.loadtest.baselines;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.RouteQuery;
import io.kvrouter.tracker.policy.Visibility;
import java.util.random.RandomGenerator;

/** {@code random}: a uniformly random order of the candidates. */
final class RandomPolicy implements Policy {

  private final RandomGenerator random;

  RandomPolicy(RandomGenerator random) {
    this.random = random;
  }

  @Override
  public String name() {
    return "random";
  }

  /** A plain load balancer: only the requests it sent itself. */
  @Override
  public Visibility visibility() {
    return Visibility.OWN_REQUESTS;
  }

  @Override
  public int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load) {
    int[] out = candidates.clone();
    for (int i = out.length - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      int t = out[i];
      out[i] = out[j];
      out[j] = t;
    }
    return out;
  }
}

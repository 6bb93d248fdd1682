package io.kvrouter.tracker.policy;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;
import java.util.ArrayDeque;
import java.util.random.RandomGenerator;

/**
 * {@code preble_e2}: Preble's E2 scheduling (Srivatsa et al., "Preble: Efficient Distributed Prompt
 * Scheduling for LLM Serving", ICLR 2025, WukLab/preble; summarised in {@code
 * shared/specs/peer-policies.md}).
 *
 * <ul>
 *   <li><b>Exploit</b> when the longest cached prefix of the prompt (over all replicas, from the
 *       index) is longer than the uncached rest: among the replicas holding that prefix, the least
 *       loaded.
 *   <li><b>Explore</b> otherwise: the replica with the least windowed load over all.
 * </ul>
 *
 * Windowed load of a replica = prefill cost of the misses routed to it within the last {@code
 * prebleWindowMillis} (uncached prompt tokens, kept by {@link #onRouted}) plus the decode cost of
 * its active requests ({@code prebleDecodeWeight} per decode token, from the ledger). Preble's cost
 * model is in time units; ours uses prefill-token-equivalents.
 */
final class PreblePolicy implements Policy {

  private final PolicyConfig config;
  private final RandomGenerator random;
  private final ArrayDeque<long[]> history = new ArrayDeque<>(); // {time, replica, missTokens}
  private long[] windowMiss = new long[16];

  PreblePolicy(PolicyConfig config, RandomGenerator random) {
    this.config = config;
    this.random = random;
  }

  @Override
  public String name() {
    return "preble_e2";
  }

  private void slide(long now) {
    while (!history.isEmpty() && history.peekFirst()[0] <= now - config.prebleWindowMillis()) {
      long[] h = history.pollFirst();
      windowMiss[(int) h[1]] -= h[2];
    }
  }

  double windowedLoad(LoadView load, int replica) {
    long miss = replica < windowMiss.length ? windowMiss[replica] : 0;
    return miss + config.prebleDecodeWeight() * load.decodeTokens(replica);
  }

  @Override
  public int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load) {
    slide(query.nowMillis());
    int n = candidates.length;
    int longest = 0;
    for (int r : candidates) {
      longest = Math.max(longest, match.matched(r));
    }
    long cachedTokens = Math.min((long) longest * query.blockSize(), query.promptTokens());
    boolean exploit = longest > 0 && cachedTokens > query.promptTokens() - cachedTokens;
    double[] cost = new double[n];
    for (int i = 0; i < n; i++) {
      cost[i] = windowedLoad(load, candidates[i]);
      if (exploit && match.matched(candidates[i]) < longest) {
        cost[i] += 1e18; // holders of the longest prefix first
      }
    }
    return Ranking.ascending(candidates, cost, random);
  }

  @Override
  public void onRouted(RouteQuery query, MatchResult match, int replica) {
    long miss =
        Math.max(0, query.promptTokens() - (long) match.matched(replica) * query.blockSize());
    if (replica >= windowMiss.length) {
      windowMiss =
          java.util.Arrays.copyOf(windowMiss, Math.max(replica + 1, 2 * windowMiss.length));
    }
    windowMiss[replica] += miss;
    history.addLast(new long[] {query.nowMillis(), replica, miss});
  }

  @Override
  public void onReplicaRemoved(int replica) {
    history.removeIf(h -> h[1] == replica);
    if (replica < windowMiss.length) {
      windowMiss[replica] = 0;
    }
  }
}

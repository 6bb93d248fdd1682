package io.kvrouter.tracker.policy;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.random.RandomGenerator;

/**
 * {@code sglang_cache_aware}: SGLang router's cache-aware policy (sgl-project/sglang {@code
 * sgl-router/src/policies/cache_aware.rs}; summarised in {@code shared/specs/peer-policies.md};
 * thresholds of the current version: abs 32, rel 1.5, cache 0.3).
 *
 * <ol>
 *   <li>Load = in-flight requests. If {@code max − min > balance_abs_threshold} and {@code max >
 *       balance_rel_threshold · min}, route to the least-loaded worker.
 *   <li>Otherwise, match the prompt against an <em>approximate</em> tree per worker built only from
 *       the prompts routed to it (no engine events). If the best match rate (matched / prompt
 *       length) exceeds {@code cache_threshold}, route to that worker.
 *   <li>Otherwise route to the worker with the smallest tree.
 * </ol>
 *
 * SGLang matches characters; we match router blocks (a block stands for its whole prefix, so a
 * per-worker set of block keys is the same tree). Each worker's tree is LRU-evicted at {@code
 * sglangMaxBlocksPerWorker} blocks, as SGLang evicts its tree by size.
 */
final class SglangCacheAwarePolicy implements Policy {

  private final PolicyConfig config;
  private final RandomGenerator random;
  private final Map<Integer, LinkedHashMap<Long, Boolean>> trees = new HashMap<>();

  SglangCacheAwarePolicy(PolicyConfig config, RandomGenerator random) {
    this.config = config;
    this.random = random;
  }

  @Override
  public String name() {
    return "sglang_cache_aware";
  }

  private LinkedHashMap<Long, Boolean> tree(int replica) {
    return trees.computeIfAbsent(
        replica,
        r ->
            new LinkedHashMap<>(64, 0.75f, true) {
              @Override
              protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
                return size() > config.sglangMaxBlocksPerWorker();
              }
            });
  }

  /** Leading prompt blocks in the worker's approximate tree. */
  int approximateMatch(RouteQuery query, int replica) {
    LinkedHashMap<Long, Boolean> tree = trees.get(replica);
    if (tree == null) {
      return 0;
    }
    int n = 0;
    while (n < query.keyCount() && tree.containsKey(query.keys()[n])) {
      n++;
    }
    return n;
  }

  @Override
  public int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load) {
    int n = candidates.length;
    double[] loadCost = new double[n];
    int min = Integer.MAX_VALUE;
    int max = Integer.MIN_VALUE;
    for (int i = 0; i < n; i++) {
      int l = load.inFlight(candidates[i]);
      loadCost[i] = l;
      min = Math.min(min, l);
      max = Math.max(max, l);
    }
    int[] byLoad = Ranking.ascending(candidates, loadCost, random);
    if (max - min > config.sglangBalanceAbs() && max > config.sglangBalanceRel() * min) {
      return byLoad;
    }
    double[] rate = new double[n];
    double bestRate = 0;
    double[] size = new double[n];
    for (int i = 0; i < n; i++) {
      rate[i] =
          query.keyCount() == 0
              ? 0
              : (double) approximateMatch(query, candidates[i]) / query.keyCount();
      bestRate = Math.max(bestRate, rate[i]);
      LinkedHashMap<Long, Boolean> tree = trees.get(candidates[i]);
      size[i] = tree == null ? 0 : tree.size();
    }
    if (bestRate > config.sglangCacheThreshold()) {
      return Ranking.descending(candidates, rate, random);
    }
    return Ranking.ascending(candidates, size, random);
  }

  @Override
  public void onRouted(RouteQuery query, MatchResult match, int replica) {
    LinkedHashMap<Long, Boolean> tree = tree(replica);
    for (int i = 0; i < query.keyCount(); i++) {
      tree.put(query.keys()[i], Boolean.TRUE);
    }
  }

  @Override
  public void onReplicaRemoved(int replica) {
    trees.remove(replica);
  }
}

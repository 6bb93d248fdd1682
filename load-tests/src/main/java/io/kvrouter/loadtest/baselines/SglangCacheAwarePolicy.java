package io.kvrouter.loadtest.baselines;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.Ranking;
import io.kvrouter.tracker.policy.RouteQuery;
import io.kvrouter.tracker.policy.Visibility;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code sglang_cache_aware}: the cache-aware policy of SGLang's model gateway (SMG, lightseekorg/
 * smg v1.9.0, {@code model_gateway/src/policies/cache_aware.rs}: {@code is_imbalanced} from line
 * 283, {@code select_worker_min_load} from 472, {@code select_worker} from 769, {@code
 * select_worker_with_text} from 1076; defaults from the gateway's command line, {@code
 * model_gateway/src/main.rs} lines 190-222: {@code cache_threshold} 0.3, {@code
 * balance_abs_threshold} 64, {@code balance_rel_threshold} 1.5, eviction every 120 s down to {@code
 * max_tree_size} 2^26). This is the gateway in front of HTTP workers, its common deployment: an
 * approximate tree of the requests it routed, no engine events.
 *
 * <ol>
 *   <li>Load is this gateway's own in-flight count per worker. If {@code max − min > 64} and {@code
 *       max > 1.5 · min}, the request goes to the least-loaded worker.
 *   <li>Otherwise the prompt is matched against the tree. If the longest match covers more than 0.3
 *       of the prompt, the request goes to the worker that owns the deepest matched node (of
 *       several, the one that touched it last).
 *   <li>Otherwise it goes to the least-loaded worker.
 * </ol>
 *
 * "Least loaded" is SMG's order: fewest in flight, then fewest requests routed so far by this
 * gateway, then the first in the worker list. The chosen worker's tree takes the prompt. Before
 * SMG, the old sgl-router sent a miss to the worker with the smallest tree and used 32 as the
 * absolute threshold; SMG changed both.
 *
 * <p>SMG's HTTP tree holds characters; here each worker's tree is the set of prompt block keys it
 * was sent (a key names its block and the whole prefix before it, so the set is that tree), and the
 * match rate is matched tokens over prompt tokens. Eviction removes a worker's least recently
 * inserted blocks beyond {@code sglangMaxBlocksPerWorker}, checked every 120 s of decision time.
 */
final class SglangCacheAwarePolicy implements Policy {

  private static final long EVICTION_INTERVAL_MILLIS = 120_000;

  private final BaselineSettings config;
  private final Map<Integer, LinkedHashMap<Long, Long>> trees = new HashMap<>();
  private long[] processed = new long[16];
  private long touches;
  private long nextEvictionMillis = Long.MIN_VALUE;

  SglangCacheAwarePolicy(BaselineSettings config) {
    this.config = config;
  }

  @Override
  public String name() {
    return "sglang_cache_aware";
  }

  /** A gateway without the mesh: its own in-flight counts, its own tree. */
  @Override
  public Visibility visibility() {
    return Visibility.OWN_REQUESTS;
  }

  /** Leading prompt blocks in the worker's approximate tree. */
  int approximateMatch(RouteQuery query, int replica) {
    LinkedHashMap<Long, Long> tree = trees.get(replica);
    if (tree == null) {
      return 0;
    }
    int n = 0;
    while (n < query.keyCount() && tree.containsKey(query.keys()[n])) {
      n++;
    }
    return n;
  }

  private long processed(int replica) {
    return replica < processed.length ? processed[replica] : 0;
  }

  @Override
  public int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load) {
    evictIfDue(query.nowMillis());
    int min = Integer.MAX_VALUE;
    int max = Integer.MIN_VALUE;
    for (int r : candidates) {
      min = Math.min(min, load.inFlight(r));
      max = Math.max(max, load.inFlight(r));
    }
    int[] ranked = leastLoadedFirst(candidates, load);
    if (max - min > config.sglangBalanceAbs() && max > config.sglangBalanceRel() * min) {
      return ranked;
    }
    int owner = deepestOwner(query, candidates);
    if (owner >= 0) {
      int matched = approximateMatch(query, owner);
      double rate =
          query.promptTokens() == 0
              ? 0
              : Math.min((long) matched * query.blockSize(), query.promptTokens())
                  / (double) query.promptTokens();
      if (rate > config.sglangCacheThreshold()) {
        return Ranking.withFirst(ranked, owner);
      }
    }
    return ranked;
  }

  /** SMG's least-loaded order: in-flight count, then requests routed so far, then list order. */
  private int[] leastLoadedFirst(int[] candidates, LoadView load) {
    Integer[] order = new Integer[candidates.length];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(
        order,
        Comparator.<Integer>comparingInt(i -> load.inFlight(candidates[i]))
            .thenComparingLong(i -> processed(candidates[i]))
            .thenComparingInt(i -> i));
    int[] out = new int[candidates.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = candidates[order[i]];
    }
    return out;
  }

  /** The worker whose tree holds the deepest matched block, the latest toucher first; or -1. */
  private int deepestOwner(RouteQuery query, int[] candidates) {
    int longest = 0;
    int owner = -1;
    long stamp = Long.MIN_VALUE;
    for (int r : candidates) {
      int m = approximateMatch(query, r);
      if (m == 0) {
        continue;
      }
      long s = trees.get(r).get(query.keys()[m - 1]);
      if (m > longest || (m == longest && s > stamp)) {
        longest = m;
        owner = r;
        stamp = s;
      }
    }
    return owner;
  }

  private void evictIfDue(long nowMillis) {
    if (nowMillis < nextEvictionMillis) {
      return;
    }
    nextEvictionMillis = nowMillis + EVICTION_INTERVAL_MILLIS;
    for (LinkedHashMap<Long, Long> tree : trees.values()) {
      Iterator<Long> oldest = tree.keySet().iterator();
      while (tree.size() > config.sglangMaxBlocksPerWorker() && oldest.hasNext()) {
        oldest.next();
        oldest.remove();
      }
    }
  }

  @Override
  public void onRouted(RouteQuery query, MatchResult match, int replica) {
    LinkedHashMap<Long, Long> tree = trees.computeIfAbsent(replica, r -> new LinkedHashMap<>());
    long stamp = ++touches;
    for (int i = 0; i < query.keyCount(); i++) {
      Long key = query.keys()[i];
      tree.remove(key); // re-insert: the map's order is least recently inserted first
      tree.put(key, stamp);
    }
    if (replica >= processed.length) {
      processed = Arrays.copyOf(processed, Math.max(replica + 1, 2 * processed.length));
    }
    processed[replica]++;
  }

  @Override
  public void onReplicaRemoved(int replica) {
    trees.remove(replica);
    if (replica < processed.length) {
      processed[replica] = 0;
    }
  }
}

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
import java.util.random.RandomGenerator;

/**
 * {@code sglang_cache_aware}: the cache-aware policy of SGLang's model gateway (SMG) in front of
 * HTTP workers, its common deployment: an approximate tree of the requests it routed, no engine
 * events. Defaults from the gateway's command line ({@code model_gateway/src/main.rs}): {@code
 * cache_threshold} 0.3, {@code balance_abs_threshold} 64, {@code balance_rel_threshold} 1.5,
 * eviction every 120 s down to {@code max_tree_size} 2^26, {@code cache_index} tree; the KV-usage
 * triggers ({@code balance_token_usage_threshold}, {@code overload_token_usage_threshold}) and the
 * worker overload vetoes are off by default. Load is this gateway's own in-flight count per worker;
 * "least loaded" is SMG's order: fewest in flight, then fewest requests routed so far by this
 * gateway, then the first in the worker list.
 *
 * <p>As smg-project/smg (formerly lightseekorg/smg) routes since e1905542 (PR #2161), read at
 * f8daa883 in {@code model_gateway/src/policies/cache_aware.rs} ({@code select_worker}, {@code
 * select_worker_with_text}, {@code select_matched_candidate}, {@code gate_selected_candidate},
 * {@code argmax_with_random_ties}):
 *
 * <ol>
 *   <li>The prompt is matched against the tree. If the longest match covers more than 0.3 of the
 *       prompt, the candidates are the workers holding the node where the match ends (at most 8,
 *       {@code MATCHED_TENANTS_CAP}); the least loaded of them wins, equals at random. If its load
 *       exceeds both 1.5 × and 64 more than the mean load of all workers, the request spills to the
 *       least-loaded worker instead.
 *   <li>Otherwise it goes to the least-loaded worker.
 * </ol>
 *
 * There is no fleet-wide request-count imbalance rule any more; the chosen worker's tree takes the
 * prompt, so a spilled hot prefix gains a second holder.
 *
 * <p>{@code sglang_cache_aware_v1_9_0} is the last release, lightseekorg/smg v1.9.0 (same file:
 * {@code is_imbalanced} from line 283, {@code select_worker_min_load} from 472, {@code
 * select_worker} from 769, {@code select_worker_with_text} from 1076):
 *
 * <ol>
 *   <li>If {@code max − min > 64} and {@code max > 1.5 · min} over the workers' loads, the request
 *       goes to the least-loaded worker.
 *   <li>Otherwise, if the longest match covers more than 0.3 of the prompt, it goes to the owner of
 *       the node where the match ends: the node's cached {@code last_tenant} in {@code
 *       crates/kv_index/src/string_tree.rs}, set to the tenant that created the node, inherited by
 *       the prefix node of a split and replaced only when that tenant is evicted from the node. So
 *       the first worker to have been sent that part of the prompt keeps it, however many others
 *       were sent it since.
 *   <li>Otherwise it goes to the least-loaded worker.
 * </ol>
 *
 * <p>{@code sglang_mesh} is the same gateway with {@code --enable-mesh}, as SMG runs several
 * gateways for high availability: each keeps its own tree and its own in-flight counts, and the
 * gateways gossip their tree inserts over the mesh ({@link SmgMesh}: once a second, as prompt
 * hashes that a receiver mostly cannot resolve, so it repairs by copying a random peer's tree).
 *
 * <p>SMG's HTTP tree holds characters; here each worker's tree is the set of prompt block keys it
 * was sent (a key names its block and the whole prefix before it, so the set is that tree), the
 * match rate is matched tokens over prompt tokens, and the node where a match of L blocks ends is
 * block L − 1: its holders are the workers matching L blocks, its owner the one among them that was
 * sent that block first. Eviction removes a worker's least recently inserted blocks beyond {@code
 * sglangMaxBlocksPerWorker}, checked every 120 s of decision time.
 */
final class SglangCacheAwarePolicy implements Policy {

  static final String NAME = "sglang_cache_aware";
  static final String V1_9_0 = "sglang_cache_aware_v1_9_0";
  static final String MESH = "sglang_mesh";

  private static final long EVICTION_INTERVAL_MILLIS = 120_000;

  /** Which SMG decides a hit. */
  enum Selection {
    /** Since PR #2161: the least-loaded holder of the matched node, gated against the mean. */
    MATCHED_HOLDERS,
    /** v1.9.0: the matched node's first owner, after a fleet-wide imbalance check. */
    FIRST_OWNER
  }

  private final String name;
  private final Selection selection;
  private final BaselineSettings config;
  private final RandomGenerator random;

  /** Per worker: block key to the time it was first inserted, least recently inserted first. */
  private final Map<Integer, LinkedHashMap<Long, Long>> trees = new HashMap<>();

  private long[] processed = new long[16];
  private long touches;
  private long nextEvictionMillis = Long.MIN_VALUE;

  /** This gateway on SMG's mesh ({@code sglang_mesh}), or null without the mesh. */
  private final SmgMesh.Gateway mesh;

  SglangCacheAwarePolicy(
      String name, Selection selection, BaselineSettings config, RandomGenerator random) {
    this(name, selection, config, random, false);
  }

  /**
   * @param mesh whether the gateway runs with {@code --enable-mesh}, on the mesh of the {@link
   *     PeerGroup} open while it is created
   */
  SglangCacheAwarePolicy(
      String name,
      Selection selection,
      BaselineSettings config,
      RandomGenerator random,
      boolean mesh) {
    this.mesh =
        mesh
            ? PeerGroup.joined()
                .channel(MESH, () -> new SmgMesh(PeerGroup.joined().delayMillis()))
                .join(this::insert)
            : null;
    this.name = name;
    this.selection = selection;
    this.config = config;
    this.random = random;
  }

  @Override
  public String name() {
    return name;
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
    if (mesh != null) {
      mesh.advanceTo(query.nowMillis());
    }
    evictIfDue(query.nowMillis());
    int[] ranked = leastLoadedFirst(candidates, load);
    return selection == Selection.FIRST_OWNER
        ? firstOwner(query, candidates, load, ranked)
        : matchedHolders(query, candidates, load, ranked);
  }

  /** SMG since PR #2161. */
  private int[] matchedHolders(RouteQuery query, int[] candidates, LoadView load, int[] ranked) {
    int longest = 0;
    long total = 0;
    for (int r : candidates) {
      longest = Math.max(longest, approximateMatch(query, r));
      total += load.inFlight(r);
    }
    if (longest == 0 || matchRate(query, longest) <= config.sglangCacheThreshold()) {
      return ranked;
    }
    double[] cost = new double[candidates.length];
    for (int i = 0; i < candidates.length; i++) {
      int r = candidates[i];
      cost[i] = approximateMatch(query, r) == longest ? load.inFlight(r) : Double.POSITIVE_INFINITY;
    }
    int pick = Ranking.ascending(candidates, cost, random)[0];
    double mean = (double) total / candidates.length;
    int pickLoad = load.inFlight(pick);
    if (pickLoad > mean * config.sglangBalanceRel()
        && pickLoad > mean + config.sglangBalanceAbs()) {
      return ranked;
    }
    return Ranking.withFirst(ranked, pick);
  }

  /** SMG v1.9.0. */
  private int[] firstOwner(RouteQuery query, int[] candidates, LoadView load, int[] ranked) {
    int min = Integer.MAX_VALUE;
    int max = Integer.MIN_VALUE;
    for (int r : candidates) {
      min = Math.min(min, load.inFlight(r));
      max = Math.max(max, load.inFlight(r));
    }
    if (max - min > config.sglangBalanceAbs() && max > config.sglangBalanceRel() * min) {
      return ranked;
    }
    int owner = deepestFirstOwner(query, candidates);
    if (owner >= 0
        && matchRate(query, approximateMatch(query, owner)) > config.sglangCacheThreshold()) {
      return Ranking.withFirst(ranked, owner);
    }
    return ranked;
  }

  /** Matched tokens over prompt tokens. */
  private static double matchRate(RouteQuery query, int matchedBlocks) {
    return query.promptTokens() == 0
        ? 0
        : Math.min((long) matchedBlocks * query.blockSize(), query.promptTokens())
            / (double) query.promptTokens();
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

  /** The worker whose tree holds the deepest matched block, the first sent it first; or -1. */
  private int deepestFirstOwner(RouteQuery query, int[] candidates) {
    int longest = 0;
    int owner = -1;
    long first = Long.MAX_VALUE;
    for (int r : candidates) {
      int m = approximateMatch(query, r);
      if (m == 0) {
        continue;
      }
      long s = trees.get(r).get(query.keys()[m - 1]);
      if (m > longest || (m == longest && s < first)) {
        longest = m;
        owner = r;
        first = s;
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
    if (mesh != null) {
      int matchedBefore = 0;
      for (int r : trees.keySet()) {
        matchedBefore = Math.max(matchedBefore, approximateMatch(query, r));
      }
      mesh.routed(
          query.nowMillis(),
          replica,
          query.keys(),
          query.keyCount(),
          query.promptTokens(),
          matchedBefore);
    }
    insert(replica, query.keys(), query.keyCount());
    if (replica >= processed.length) {
      processed = Arrays.copyOf(processed, Math.max(replica + 1, 2 * processed.length));
    }
    processed[replica]++;
  }

  /** {@code replica}'s tree takes the first {@code count} of {@code keys}. */
  private void insert(int replica, long[] keys, int count) {
    LinkedHashMap<Long, Long> tree = trees.computeIfAbsent(replica, r -> new LinkedHashMap<>());
    long stamp = ++touches;
    for (int i = 0; i < count; i++) {
      Long key = keys[i];
      Long first = tree.remove(key); // re-insert: the map's order is least recently inserted first
      tree.put(key, first == null ? stamp : first);
    }
  }

  @Override
  public void onReplicaRemoved(int replica) {
    trees.remove(replica);
    if (replica < processed.length) {
      processed[replica] = 0;
    }
  }
}

package io.kvrouter.loadtest.baselines;

import io.kvrouter.loadtest.baselines.PrebleTree.Node;
import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.Ranking;
import io.kvrouter.tracker.policy.RouteQuery;
import io.kvrouter.tracker.policy.Visibility;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

/**
 * {@code preble_e2}: Preble's global scheduler (Srivatsa et al., "Preble: Efficient Distributed
 * Prompt Scheduling for LLM Serving", ICLR 2025; followed from WukLab/preble at 8e7906a, {@code
 * preble/global_scheduler_with_time.py}: {@code calculate_min_load_cost} lines 291-302, {@code
 * runtime_selector} 304-356, {@code finish_request} 358-375, {@code handle_important_node_stealing}
 * 377-385 and {@code handle_important_node_stealing_recursive} 387-457; {@code
 * preble/ttft_overload_detector.py}: {@code is_node_overloaded} from line 57).
 *
 * <p>One scheduler sees every request (see {@link #visibility()}). It keeps its own radix tree of
 * the prompts it routed ({@link PrebleTree}), not the engines' events, and a three-minute load
 * window ({@link PrebleWindow}). For each request:
 *
 * <ol>
 *   <li>The prompt is inserted. If its new part (its leaf) is shorter than the part the tree
 *       already held, it <b>exploits</b>: among the replicas allocated to the nearest allocated
 *       ancestor, the one with the least load; otherwise it <b>explores</b>: the replica with the
 *       least load overall. Load ties go to the lowest replica index.
 *   <li>The leaf and its ancestors are allocated to the chosen replica and count the request as
 *       running there until it finishes.
 *   <li>Once 50 requests per replica have been routed, after each request whose leaf sits fewer
 *       than three nodes below its important node, work is <b>stolen</b>: while the busiest
 *       replica's load (nodes with at least two requests in the window) is at least 1.5 times the
 *       idlest's, its cheapest important nodes move to the idlest replica (with their subtrees) as
 *       long as that does not reverse the imbalance; then the next busiest, and so on. A replica
 *       whose load is a single node instead <b>replicates</b> it onto the idlest replica, if that
 *       node's TTFT over the last 90 s is at least twice that of the 90 s before.
 * </ol>
 *
 * <p>Stated differences. (1) Units are blocks, not tokens. (2) Prefill time is the simulated
 * engine's fitted model (the Dynamo mocker polynomial, {@link #prefillSeconds}) instead of Preble's
 * fit of its own GPU. (3) Preble's decode term is running requests × the node's latest {@code
 * max_new_tokens} × the replica's median time per output token; the router knows neither the output
 * length nor the token count, so it uses running requests × the replica's median measured decode
 * time per request (last 200; 0.15 s × 45 tokens, Preble's starting TPOT and default output length,
 * until the first one finishes). (4) Preble's exploit step takes {@code argmin} over the allocated
 * replicas and returns its position in that list, not the replica; the position is a bug that would
 * send exploited prefixes to replicas 0 and 1, so the replica it means is used. (5) The shipped
 * server also enables an LRU eviction model sized for its GPU (198,516 tokens) whose virtual
 * eviction cost joins the load; this is the scheduler's default without it ({@code
 * enable_eviction=False}, the benchmarks' {@code GlobalSchedulerTime}).
 *
 * <p><b>Why its hit rate falls to round robin's on the Mooncake conversation trace.</b> Work
 * stealing, not a lack of exploitation. Stealing weighs each replica by the window nodes with at
 * least two requests, and a stolen node's decode term follows its running requests, which stay
 * where they are: on the thief it counts zero running requests, on the victim it is no longer
 * allocated. So a steal lifts the idlest replica's load by less than it took, the 1.5 ratio holds
 * again at the next short-chain request, and conversations keep moving to replicas that do not hold
 * them (their next turn is then exploited there, a miss). Instrumented on the full trace (8
 * replicas, unlimited capacity): 6,960 explores and 5,040 exploits in the first 12,000 decisions,
 * and 123,831 nodes moved by 26,173 steals. Preble's own scheduler does the same: {@code
 * GlobalSchedulerWithTime} from 8e7906a, run unchanged but for stubs of its tokenizer and GPU model
 * (replaced by {@link #prefillSeconds}) and the argmin fix of (4), fed the first 3,000 requests of
 * the trace (trace blocks as tokens, first token 200 ms and release 1.1 s after each decision, 45
 * output tokens), makes the same first 442 decisions as this class, moves 53,990 nodes in 2,566
 * steal rounds (this class: 53,264) and reaches a block hit rate of 0.124 (this class 0.119; round
 * robin 0.105; one cache 0.314); with {@code enable_rebalancing=False} it reaches 0.256. The
 * harness is {@code docs/results/preble-diff/}. The earlier baseline (before the peers were
 * re-read, hit rate 0.357) had no work stealing and exploited the index's cached prefixes.
 */
final class PreblePolicy implements Policy {

  static final long WINDOW_MILLIS = 180_000;
  static final double HIGH_LOAD_THRESHOLD = 1.5;
  static final int REBALANCING_CHAIN_LENGTH = 3;
  static final int STEAL_AFTER_PER_REPLICA = 50;
  static final int TPOT_SAMPLES = 200;
  static final double INITIAL_DECODE_SECONDS = 0.15 * 45;

  private record Running(Node leaf, int replica, long decidedMillis, long[] firstTokenMillis) {}

  private record OverloadKey(PrebleWindow.Stats node, int replica) {}

  private final PrebleTree tree = new PrebleTree();
  private final PrebleWindow window = new PrebleWindow(WINDOW_MILLIS);
  private final Map<String, Running> running = new HashMap<>();
  private final Map<OverloadKey, ArrayDeque<long[]>> ttfts = new HashMap<>();
  private final Map<Integer, ArrayDeque<Double>> decodeSeconds = new HashMap<>();
  private final Map<Integer, Double> decodeMedians = new HashMap<>();
  private long routed;
  private Node pendingLeaf;
  private Node pendingImportant;
  private Node lastPlacedLeaf;
  private int[] pendingCandidates = new int[0];

  PreblePolicy() {}

  @Override
  public String name() {
    return "preble_e2";
  }

  /** One global scheduler, which tracks the requests it routed and never reads engine events. */
  @Override
  public Visibility visibility() {
    return Visibility.OWN_REQUESTS.asGlobalScheduler();
  }

  /** The simulated engine's prefill time of {@code tokens} uncached tokens, in seconds. */
  static double prefillSeconds(long tokens) {
    double x = tokens;
    return (4.209989e-7 * x * x + 1.518344e-2 * x + 16.50142) / 1000;
  }

  private double[] decodeEstimates(int replicas) {
    double[] out = new double[replicas];
    for (int r = 0; r < replicas; r++) {
      out[r] = decodeMedians.getOrDefault(r, INITIAL_DECODE_SECONDS);
    }
    return out;
  }

  private static double median(ArrayDeque<Double> values) {
    double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int m = v.length / 2;
    return v.length % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
  }

  private static int replicaSpan(int[] candidates) {
    int max = 0;
    for (int r : candidates) {
      max = Math.max(max, r);
    }
    return max + 1;
  }

  @Override
  public int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load) {
    int span = replicaSpan(candidates);
    pendingLeaf = tree.insert(query.keys(), query.keyCount(), window::rename);
    pendingImportant = PrebleTree.important(pendingLeaf);
    pendingCandidates = candidates.clone();
    double[] cost = window.load(span, query.blockSize(), decodeEstimates(span), 0);
    int pick = -1;
    if (pendingLeaf.blocks() < pendingLeaf.contextSoFar()) {
      BitSet allocated = PrebleTree.inheritedAllocation(pendingLeaf);
      if (allocated != null) {
        pick = cheapest(candidates, cost, allocated);
      }
    }
    if (pick < 0) {
      pick = cheapest(candidates, cost, null);
    }
    double[] byCost = new double[candidates.length];
    for (int i = 0; i < candidates.length; i++) {
      byCost[i] = cost[candidates[i]];
    }
    return Ranking.withFirst(Ranking.ascending(candidates, byCost, Ranking.NO_RANDOMNESS), pick);
  }

  /** The candidate (in {@code allowed}, if given) of least cost, lowest index first; or -1. */
  private static int cheapest(int[] candidates, double[] cost, BitSet allowed) {
    int best = -1;
    for (int r : candidates) {
      if ((allowed == null || allowed.get(r)) && (best < 0 || cost[r] < cost[best])) {
        best = r;
      }
    }
    return best;
  }

  @Override
  public void onRouted(RouteQuery query, MatchResult match, int replica) {
    if (pendingLeaf == null) {
      return;
    }
    Node leaf = pendingLeaf;
    Node important = pendingImportant;
    pendingLeaf = null;
    lastPlacedLeaf = leaf;
    PrebleTree.place(leaf, replica);
    window.add(query.nowMillis(), important, leaf);
    routed++;
    if (PrebleTree.distance(leaf, important) < REBALANCING_CHAIN_LENGTH) {
      steal(query);
    }
  }

  private void steal(RouteQuery query) {
    int[] candidates = pendingCandidates;
    if (routed < (long) STEAL_AFTER_PER_REPLICA * candidates.length || candidates.length < 2) {
      return;
    }
    int span = replicaSpan(candidates);
    double[] decode = decodeEstimates(span);
    double[] load = window.load(span, query.blockSize(), decode, 2);
    Integer[] order = Arrays.stream(candidates).boxed().toArray(Integer[]::new);
    Arrays.sort(order, (a, b) -> Double.compare(load[b], load[a])); // busiest first, stable
    for (int lo = 0, hi = order.length - 1; lo < hi; lo++) {
      int larger = order[lo];
      int smaller = order[hi];
      if (load[larger] < HIGH_LOAD_THRESHOLD * load[smaller]) {
        return;
      }
      moveNodes(query, larger, smaller, load, decode[larger]);
    }
  }

  /** Moves (or replicates) important nodes from {@code larger} to {@code smaller}. */
  private void moveNodes(RouteQuery query, int larger, int smaller, double[] load, double decode) {
    java.util.List<PrebleWindow.Stats> movable = new java.util.ArrayList<>();
    for (PrebleWindow.Stats s : window.nodes()) {
      if (s.owner.allocation.get(larger) && s.owner.large() && s.requests > 1) {
        movable.add(s);
      }
    }
    int bs = query.blockSize();
    movable.sort(
        (a, b) ->
            Double.compare(
                PrebleWindow.cost(a, larger, bs, decode),
                PrebleWindow.cost(b, larger, bs, decode)));
    if (movable.size() == 1) {
      PrebleWindow.Stats s = movable.get(0);
      double cost = PrebleWindow.cost(s, larger, bs, decode) / 2;
      if (!s.owner.allocation.get(smaller) && overloaded(s, larger, query.nowMillis())) {
        load[larger] -= cost;
        load[smaller] += cost;
        s.owner.allocation.set(smaller);
        ttfts.remove(new OverloadKey(s, larger));
      }
      return;
    }
    for (PrebleWindow.Stats s : movable) {
      double cost = PrebleWindow.cost(s, larger, bs, decode);
      if (load[larger] - cost < load[smaller] + cost) {
        break;
      }
      load[larger] -= cost;
      load[smaller] += cost;
      PrebleTree.allocateSubtree(s.owner, smaller);
      if (load[larger] < HIGH_LOAD_THRESHOLD * load[smaller]) {
        break;
      }
    }
  }

  /** Preble's TTFT overload test: the last half-window's mean TTFT at least twice the first's. */
  private boolean overloaded(PrebleWindow.Stats node, int replica, long nowMillis) {
    ArrayDeque<long[]> samples = ttfts.get(new OverloadKey(node, replica));
    if (samples == null) {
      return false;
    }
    long cut = nowMillis - WINDOW_MILLIS / 2;
    double first = 0;
    double second = 0;
    int nFirst = 0;
    int nSecond = 0;
    for (long[] s : samples) {
      if (s[0] < cut) {
        first += s[1];
        nFirst++;
      } else {
        second += s[1];
        nSecond++;
      }
    }
    return nFirst > 0 && nSecond > 0 && second / nSecond >= 2 * (first / nFirst);
  }

  @Override
  public void onReserved(String requestId, RouteQuery query, int replica) {
    Node leaf = lastPlacedLeaf;
    lastPlacedLeaf = null;
    if (leaf != null) {
      running.put(requestId, new Running(leaf, replica, query.nowMillis(), new long[] {-1}));
    }
  }

  @Override
  public void onPrefillCompleted(String requestId, long nowMillis) {
    Running r = running.get(requestId);
    if (r != null) {
      r.firstTokenMillis()[0] = nowMillis;
    }
  }

  @Override
  public void onReleased(String requestId, long nowMillis) {
    Running r = running.remove(requestId);
    if (r == null) {
      return;
    }
    PrebleTree.finish(r.leaf(), r.replica());
    long first = r.firstTokenMillis()[0];
    if (nowMillis < 0 || first < 0) {
      return;
    }
    PrebleWindow.Stats important = PrebleTree.important(r.leaf()).stats;
    if (important != null) {
      ArrayDeque<long[]> samples =
          ttfts.computeIfAbsent(new OverloadKey(important, r.replica()), k -> new ArrayDeque<>());
      samples.addLast(new long[] {nowMillis, first - r.decidedMillis()});
      while (!samples.isEmpty() && samples.peekFirst()[0] < nowMillis - WINDOW_MILLIS) {
        samples.pollFirst();
      }
    }
    if (nowMillis > first) {
      ArrayDeque<Double> d =
          decodeSeconds.computeIfAbsent(
              r.replica(), k -> new ArrayDeque<>(java.util.List.of(INITIAL_DECODE_SECONDS)));
      d.addLast((nowMillis - first) / 1000.0);
      while (d.size() > TPOT_SAMPLES) {
        d.pollFirst();
      }
      decodeMedians.put(r.replica(), median(d));
    }
  }

  @Override
  public void onReplicaRemoved(int replica) {
    tree.dropReplica(replica);
    running.values().removeIf(r -> r.replica() == replica);
    decodeSeconds.remove(replica);
    decodeMedians.remove(replica);
  }
}

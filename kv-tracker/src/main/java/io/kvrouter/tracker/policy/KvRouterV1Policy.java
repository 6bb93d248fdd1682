package io.kvrouter.tracker.policy;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;
import java.util.random.RandomGenerator;

/**
 * kvrouter's first policy ({@code kvrouter_v1}), kept for comparison with {@link TtftPolicy}: the
 * replica with the lowest expected work, where work weighs the prompt's uncached part against the
 * replica's load, busy replicas last, near-ties broken at random.
 *
 * <p>Per candidate {@code r}, in token-equivalents:
 *
 * <pre>
 *   cached_r   = bs · (gpuCredit·gpu + predictedCredit·predicted + cpuCredit·cpu + diskCredit·disk)
 *   uncached_r = max(0, promptTokens − cached_r)
 *   cost_r     = P(uncached_r) + queuedPrefill_r + decodeWeight · decodeTokens_r
 *   P(x)       = x · (1 + x / prefillQuadraticTokens)
 * </pre>
 *
 * The tier credits are Dynamo's (host 0.75, disk 0.25: {@code KvRouterConfig}'s defaults in
 * ai-dynamo/dynamo {@code lib/kv-router}, see {@link DynamoKvPolicy}); the quadratic prefill term
 * is the shape of the Dynamo mocker's prefill time model (ai-dynamo/dynamo {@code lib/mocker}, as
 * {@code MockerTimingModel}), so a long uncached prompt costs more than its length. A replica is
 * <em>busy</em> when its reported KV usage reaches {@code busyKvUsage}, its reported queue reaches
 * {@code busyWaiting}, or its reservations reach {@code maxInFlight}; busy replicas are ranked
 * after all others (and used only if every replica is busy).
 *
 * <p>Near-ties: every non-busy candidate with cost within {@code max(tieAbsoluteTokens, tieRelative
 * · best)} of the best is eligible, and one is drawn with probability proportional to {@code
 * exp(−(cost − best) / (temperature · band))}. Routers that act on the same state thus spread
 * requests among equally good replicas instead of herding onto one, while a replica that is clearly
 * better (outside the band) is always chosen. The rest follow by cost.
 */
final class KvRouterV1Policy implements Policy {

  private final PolicyConfig config;
  private final RandomGenerator random;

  KvRouterV1Policy(PolicyConfig config, RandomGenerator random) {
    this.config = config;
    this.random = random;
  }

  @Override
  public String name() {
    return "kvrouter_v1";
  }

  /** The cost of {@code replica} for {@code query}; lower is better. */
  double cost(RouteQuery query, MatchResult match, LoadView load, int replica) {
    double cached = config.cachedBlocks(match, replica) * query.blockSize();
    double uncached = Math.max(0, query.promptTokens() - cached);
    double prefill = uncached * (1 + uncached / config.prefillQuadraticTokens());
    return prefill
        + load.prefillTokens(replica)
        + config.decodeWeight() * load.decodeTokens(replica);
  }

  boolean busy(LoadView load, int replica) {
    return config.busy(load, replica);
  }

  @Override
  public int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load) {
    int n = candidates.length;
    double[] cost = new double[n];
    boolean anyFree = false;
    for (int i = 0; i < n; i++) {
      cost[i] = cost(query, match, load, candidates[i]);
      anyFree |= !busy(load, candidates[i]);
    }
    double[] sortKey = cost.clone();
    if (anyFree) {
      for (int i = 0; i < n; i++) {
        if (busy(load, candidates[i])) {
          sortKey[i] = Double.POSITIVE_INFINITY;
        }
      }
    }
    double best = Double.POSITIVE_INFINITY;
    for (double c : sortKey) {
      best = Math.min(best, c);
    }
    double band = Math.max(config.tieAbsoluteTokens(), config.tieRelative() * best);
    int eligible = 0;
    for (double c : sortKey) {
      if (c <= best + band) {
        eligible++;
      }
    }
    if (config.deterministicTies()) {
      return Ranking.ascending(candidates, sortKey, Ranking.NO_RANDOMNESS);
    }
    int[] ranked = Ranking.ascending(candidates, sortKey, random);
    if (eligible <= 1) {
      return ranked;
    }
    int[] ties = new int[eligible];
    double[] tieCost = new double[eligible];
    for (int i = 0, j = 0; i < n; i++) {
      if (sortKey[i] <= best + band) {
        ties[j] = candidates[i];
        tieCost[j++] = sortKey[i];
      }
    }
    int pick = Ranking.softmin(tieCost, config.temperature() * band, random);
    return Ranking.withFirst(ranked, ties[pick]);
  }
}

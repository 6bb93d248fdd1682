package io.kvrouter.tracker.policy;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;
import java.util.random.RandomGenerator;

/**
 * {@code dynamo_kv}: NVIDIA Dynamo's KV router cost, as its router docs describe it (ai-dynamo/
 * dynamo {@code docs/architecture/kv_cache_routing.md} and {@code docs/design_docs/
 * router_design.md}; summarised in {@code shared/specs/peer-policies.md}):
 *
 * <pre>
 *   cost = overlap_score_weight · prefill_blocks + decode_blocks
 *   prefill_blocks = prompt blocks not cached on the worker (tier credit: host 0.75, disk 0.25)
 *                    + the worker's queued prefill blocks
 *   decode_blocks  = the worker's active KV blocks, including this request's ("potential active")
 * </pre>
 *
 * Exact overlap comes from the event-fed index. With {@code router_temperature} 0 the minimum wins
 * (ties at random); above 0 a worker is sampled with softmax over −cost / temperature, the costs
 * first divided by the largest so the temperature is scale-free.
 */
final class DynamoKvPolicy implements Policy {

  private final PolicyConfig config;
  private final RandomGenerator random;

  DynamoKvPolicy(PolicyConfig config, RandomGenerator random) {
    this.config = config;
    this.random = random;
  }

  @Override
  public String name() {
    return "dynamo_kv";
  }

  @Override
  public int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load) {
    int n = candidates.length;
    double bs = query.blockSize();
    double promptBlocks = query.promptBlocks();
    double[] cost = new double[n];
    double max = 0;
    for (int i = 0; i < n; i++) {
      int r = candidates[i];
      double prefillBlocks =
          Math.max(0, promptBlocks - config.cachedBlocks(match, r)) + load.prefillTokens(r) / bs;
      double decodeBlocks = load.activeTokens(r) / bs + promptBlocks;
      cost[i] = config.dynamoOverlapWeight() * prefillBlocks + decodeBlocks;
      max = Math.max(max, cost[i]);
    }
    int[] ranked = Ranking.ascending(candidates, cost, random);
    if (config.dynamoTemperature() <= 0 || max <= 0) {
      return ranked;
    }
    double[] normalised = new double[n];
    for (int i = 0; i < n; i++) {
      normalised[i] = cost[i] / max;
    }
    int pick = Ranking.softmin(normalised, config.dynamoTemperature(), random);
    return Ranking.withFirst(ranked, candidates[pick]);
  }
}

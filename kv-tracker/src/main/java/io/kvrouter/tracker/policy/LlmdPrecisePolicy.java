package io.kvrouter.tracker.policy;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;
import java.util.random.RandomGenerator;

/**
 * {@code llmd_precise}: the llm-d inference scheduler with its precise-prefix-cache configuration
 * (llm-d/llm-d-inference-scheduler; summarised in {@code shared/specs/peer-policies.md}): a
 * weighted sum of normalised scorers, the maximum wins.
 *
 * <ul>
 *   <li>precise prefix score × 2.0: leading prompt blocks the pod holds (from the event-fed index)
 *       divided by prompt blocks;
 *   <li>KV-cache utilisation score × 1.0: {@code 1 − kv_cache_usage};
 *   <li>queue score × 1.0: waiting queue sizes min-max normalised, the shortest queue scoring 1 and
 *       the longest 0 (all 1 when queues are equal).
 * </ul>
 *
 * Ties are broken at random.
 */
final class LlmdPrecisePolicy implements Policy {

  private final PolicyConfig config;
  private final RandomGenerator random;

  LlmdPrecisePolicy(PolicyConfig config, RandomGenerator random) {
    this.config = config;
    this.random = random;
  }

  @Override
  public String name() {
    return "llmd_precise";
  }

  @Override
  public int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load) {
    int n = candidates.length;
    int minQ = Integer.MAX_VALUE;
    int maxQ = Integer.MIN_VALUE;
    for (int r : candidates) {
      minQ = Math.min(minQ, load.waiting(r));
      maxQ = Math.max(maxQ, load.waiting(r));
    }
    double promptBlocks = Math.max(1, query.keyCount());
    double[] score = new double[n];
    for (int i = 0; i < n; i++) {
      int r = candidates[i];
      double prefix = match.matched(r) / promptBlocks;
      double kv = 1 - load.kvUsage(r);
      double queue = maxQ == minQ ? 1 : (double) (maxQ - load.waiting(r)) / (maxQ - minQ);
      score[i] =
          config.llmdPrefixWeight() * prefix
              + config.llmdKvWeight() * kv
              + config.llmdQueueWeight() * queue;
    }
    return Ranking.descending(candidates, score, random);
  }
}

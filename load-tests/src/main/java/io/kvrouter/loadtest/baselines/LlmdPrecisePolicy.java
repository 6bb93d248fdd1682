package io.kvrouter.loadtest.baselines;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.index.TierWeights;
import io.kvrouter.tracker.ledger.LoadView;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.Ranking;
import io.kvrouter.tracker.policy.RouteQuery;
import io.kvrouter.tracker.policy.Visibility;
import java.util.random.RandomGenerator;

/**
 * {@code llmd_precise}: llm-d's endpoint picker in its precise-prefix-cache configuration, as
 * llm-d/llm-d-router (formerly llm-d-inference-scheduler) scores now, read at ebab6879: the default
 * profile of {@code deploy/config/epp-precise-prefix-cache-config.yaml} weighs {@code
 * prefix-cache-scorer} 2.0, {@code kv-cache-utilization-scorer} 1.0 and {@code queue-scorer} 1.0,
 * summed ({@code runScorerPlugins} in {@code pkg/epp/scheduling/scheduler_profile.go} line 253),
 * and {@code max-score-picker} takes the highest, ties at random (shuffle, then a stable sort:
 * {@code picker/maxscore/picker.go} line 92). Under {@code pkg/epp/framework/plugins/}:
 *
 * <ul>
 *   <li>precise prefix × 2: each pod's leading prompt blocks in the index fed by the engines' KV
 *       events, each block counted at the weight of the best tier the pod holds it in (GPU 1.0, CPU
 *       0.8, a medium without a weight 1.0: {@code LongestPrefixScorer.Score} and {@code
 *       DefaultKVBlockScorerConfig} in llm-d/llm-d-kv-cache {@code pkg/kvcache/kvblock_scorer.go}
 *       and {@code backend.go}, read at 7be76e11), truncated to whole blocks ({@code matchLen :=
 *       int(...)}, {@code produceFromBlockKeys} in {@code
 *       requestcontrol/dataproducer/preciseprefixcache/producer.go} line 380) and divided by the
 *       prompt's full blocks ({@code matchRatioScore} in {@code scheduling/scorer/prefix/plugin.go}
 *       line 158, {@code matchLengthWeight} 0 by default). This is commit e6f6b84f (PR #1107,
 *       "switch to absolute matched/total normalization"), which replaced the min-max of v0.8.0.
 *       Speculative entries are off by default ({@code speculativeIndexing} false, 2 s TTL when on:
 *       {@code producer.go} line 61, {@code prerequest.go} line 35), so the index has only
 *       confirmed blocks;
 *   <li>KV-cache utilisation × 1: {@code 1 − kv_cache_usage} ({@code
 *       scorer/kvcacheutilization/kvcache_utilization.go} line 84);
 *   <li>queue × 1: waiting requests min-max normalised, shortest queue 1, longest 0, all 1 when
 *       equal ({@code scorer/queuedepth/queue.go} line 84).
 * </ul>
 *
 * Queue and KV usage are the engines' metrics as last scraped, every 50 ms (the default and minimum
 * {@code --refresh-metrics-interval}, {@code pkg/epp/server/options.go} line 45).
 *
 * <p>{@code llmd_precise_v0_8_0} keeps llm-d-inference-scheduler v0.8.0, before e6f6b84f: the
 * prefix score is min-max normalised over the pods that hold at least the first block (all of them
 * 1 when they hold equally many; a pod holding none scores 0), without truncation ({@code Score} in
 * {@code pkg/epp/framework/plugins/scheduling/scorer/preciseprefixcache/precise_prefix_cache.go}
 * from line 416, {@code indexedScoresToNormalizedScoredPods} in {@code utils.go} lines 20-44; the
 * other scorers and the picker from gateway-api-inference-extension v1.5.0, which it pins).
 *
 * <p>One endpoint picker decides every request however many gateway replicas forward to it: the
 * chart turns on leader election as soon as it runs more than one picker ({@code
 * config/charts/epplib/templates/_deployment.yaml} lines 130-131 at v0.8.0), and then only the
 * leader passes its readiness probe ({@code --ha-enable-leader-election}).
 *
 * <p><b>Herding on a shared first block, v0.8.0 only.</b> Under min-max a pod that alone holds a
 * prompt's first block scores the full prefix weight 2, while a pod holding none can make up at
 * most 1 + 1 from an empty queue and an empty KV cache; so the holder wins however long its queue,
 * until its KV cache is completely in use. Every prompt of the Mooncake conversation trace starts
 * with the same block, so with arrivals spread over each tick one pod takes every request (the
 * router sweep's 500 requests: load max/mean 8.0, p90 TTFT 54 s). Matched over total blocks gives
 * that pod 2 × 1 / n for one shared block of n, so the queue and KV scores decide again; e6f6b84f's
 * message names this ("small absolute hits were amplified to 1.0 when best-in-set").
 */
final class LlmdPrecisePolicy implements Policy {

  /** GIE's default {@code --refresh-metrics-interval}. */
  static final long METRICS_REFRESH_MILLIS = 50;

  static final String NAME = "llmd_precise";
  static final String V0_8_0 = "llmd_precise_v0_8_0";

  /** How the precise prefix scorer turns matched blocks into a score in [0, 1]. */
  enum PrefixScore {
    /** llm-d-router since e6f6b84f: whole matched blocks over the prompt's blocks. */
    MATCHED_OVER_TOTAL,
    /** llm-d-inference-scheduler v0.8.0: min-max over the pods holding the first block. */
    MIN_MAX_OVER_HOLDERS
  }

  private final String name;
  private final PrefixScore prefixScore;
  private final BaselineSettings config;
  private final RandomGenerator random;

  LlmdPrecisePolicy(
      String name, PrefixScore prefixScore, BaselineSettings config, RandomGenerator random) {
    this.name = name;
    this.prefixScore = prefixScore;
    this.config = config;
    this.random = random;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public Visibility visibility() {
    return Visibility.OWN_REQUESTS.withMetricsInterval(METRICS_REFRESH_MILLIS).asGlobalScheduler();
  }

  @Override
  public int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load) {
    int n = candidates.length;
    int minQ = Integer.MAX_VALUE;
    int maxQ = Integer.MIN_VALUE;
    double minHit = Double.MAX_VALUE;
    double maxHit = 0;
    for (int r : candidates) {
      minQ = Math.min(minQ, load.waiting(r));
      maxQ = Math.max(maxQ, load.waiting(r));
      if (match.matched(r) > 0) {
        minHit = Math.min(minHit, weighedHit(match, r));
        maxHit = Math.max(maxHit, weighedHit(match, r));
      }
    }
    double[] score = new double[n];
    for (int i = 0; i < n; i++) {
      int r = candidates[i];
      double prefix =
          prefixScore == PrefixScore.MATCHED_OVER_TOTAL
              ? matchedOverTotal(match, r, query.keyCount())
              : minMaxOverHolders(match, r, minHit, maxHit);
      double kv = 1 - load.kvUsage(r);
      double queue = maxQ == minQ ? 1 : (double) (maxQ - load.waiting(r)) / (maxQ - minQ);
      score[i] =
          config.llmdPrefixWeight() * prefix
              + config.llmdKvWeight() * kv
              + config.llmdQueueWeight() * queue;
    }
    return Ranking.descending(candidates, score, random);
  }

  /** Whole weighed blocks over the prompt's blocks, at most 1; 0 for an empty prompt. */
  static double matchedOverTotal(MatchResult match, int replica, int promptBlocks) {
    if (promptBlocks == 0 || match.matched(replica) == 0) {
      return 0;
    }
    return Math.min(1.0, Math.floor(weighedHit(match, replica)) / promptBlocks);
  }

  private static double minMaxOverHolders(
      MatchResult match, int replica, double minHit, double maxHit) {
    if (match.matched(replica) == 0) {
      return 0;
    }
    return maxHit == minHit ? 1 : (weighedHit(match, replica) - minHit) / (maxHit - minHit);
  }

  /**
   * The matched run with CPU- and disk-held blocks at llm-d's weights ({@link TierWeights#llmd}).
   */
  static double weighedHit(MatchResult match, int replica) {
    TierWeights w = TierWeights.llmd();
    return match.matched(replica)
        - (1 - w.cpu()) * match.cpu(replica)
        - (1 - w.disk()) * match.disk(replica);
  }
}

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
 * {@code llmd_precise}: the llm-d inference scheduler in its precise-prefix-cache configuration
 * (llm-d/llm-d-inference-scheduler v0.8.0, {@code
 * deploy/config/epp-precise-prefix-cache-config.yaml}; under {@code
 * pkg/epp/framework/plugins/scheduling/scorer/preciseprefixcache/}: {@code Score} in {@code
 * precise_prefix_cache.go} from line 416 and {@code indexedScoresToNormalizedScoredPods} in {@code
 * utils.go} lines 20-44. The other scorers, the picker and the metrics refresh come from
 * gateway-api-inference-extension v1.5.0, the version it pins, under {@code
 * pkg/epp/framework/plugins/scheduling/}: {@code scorer/queuedepth/queue.go} from line 78, {@code
 * scorer/kvcacheutilization/kvcache_utilization.go} from 76, {@code picker/max_score_picker.go}
 * from 81; and {@code pkg/epp/server/options.go} line 102). The weighted sum of three scorers, the
 * highest wins, ties at random:
 *
 * <ul>
 *   <li>precise prefix cache × 2: each pod's leading prompt blocks in the index fed by the engines'
 *       KV events, each block counted at the weight of the best tier the pod holds it in (GPU 1.0,
 *       CPU 0.8, a medium it has no weight for 1.0: {@code DefaultKVCacheBackendConfig} in {@code
 *       pkg/kvcache/backend.go} and {@code getMaxWeight} / {@code LongestPrefixScorer.Score} in
 *       {@code pkg/kvcache/kvblock_scorer.go}, llm-d/llm-d-kv-cache-manager at a378f5b3, v0.4.0-9),
 *       min-max normalised over the pods that hold at least the first block (all of them 1 when
 *       they hold equally many; a pod holding none scores 0). Speculative entries are off by
 *       default, so the index has only confirmed blocks;
 *   <li>KV-cache utilisation × 1: {@code 1 − kv_cache_usage};
 *   <li>queue × 1: waiting requests min-max normalised, shortest queue 1, longest 0 (all 1 when
 *       equal).
 * </ul>
 *
 * Queue and KV usage are the engines' metrics as last scraped, every 50 ms ({@code
 * --refresh-metrics-interval}).
 *
 * <p>One endpoint picker decides every request however many gateway replicas forward to it: the
 * chart turns on leader election as soon as it runs more than one picker ({@code
 * config/charts/epplib/templates/_deployment.yaml} lines 130-131), and then only the leader passes
 * its readiness probe ({@code --ha-enable-leader-election}, {@code pkg/epp/server/options.go} line
 * 127).
 *
 * <p><b>Herding on a shared first block.</b> A pod that alone holds a prompt's first block scores
 * the full prefix weight 2 (min-max over one holder is 1), while a pod holding none can make up at
 * most 1 + 1 from an empty queue and an empty KV cache; so the holder wins however long its queue,
 * until its KV cache is completely in use (then it ties). Every prompt of the Mooncake conversation
 * trace starts with the same block. With arrivals spread over each tick, the second request arrives
 * after the first one's KV events confirmed that block on one pod, and from then on that pod takes
 * every request (the router sweep's 500 requests: load max/mean 8.0, p90 TTFT 54 s, hit rate 0.04
 * as its cache thrashes under a queue of hundreds). With arrivals as recorded, the first tick's
 * requests arrive together before any event, tie on queue and KV, spread at random, and several
 * pods hold the first block from then on. This is llm-d's scoring as configured, not a lab effect:
 * the scorer sees what its peer sees (confirmed blocks, metrics every 50 ms), and the normalisation
 * above is {@code indexedScoresToNormalizedScoredPods} over the pods {@code LongestPrefixScorer}
 * (llm-d/llm-d-kv-cache v0.7.1, {@code pkg/kvcache/kvblock_scorer.go} lines 106-154) returns, which
 * are the holders of the first block only.
 */
final class LlmdPrecisePolicy implements Policy {

  /** GIE's default {@code --refresh-metrics-interval}. */
  static final long METRICS_REFRESH_MILLIS = 50;

  private final BaselineSettings config;
  private final RandomGenerator random;

  LlmdPrecisePolicy(BaselineSettings config, RandomGenerator random) {
    this.config = config;
    this.random = random;
  }

  @Override
  public String name() {
    return "llmd_precise";
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
      double hit = match.matched(r) == 0 ? 0 : weighedHit(match, r);
      double prefix =
          match.matched(r) == 0 ? 0 : maxHit == minHit ? 1 : (hit - minHit) / (maxHit - minHit);
      double kv = 1 - load.kvUsage(r);
      double queue = maxQ == minQ ? 1 : (double) (maxQ - load.waiting(r)) / (maxQ - minQ);
      score[i] =
          config.llmdPrefixWeight() * prefix
              + config.llmdKvWeight() * kv
              + config.llmdQueueWeight() * queue;
    }
    return Ranking.descending(candidates, score, random);
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

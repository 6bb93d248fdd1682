package io.kvrouter.loadtest.baselines;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.Ranking;
import io.kvrouter.tracker.policy.RouteQuery;
import io.kvrouter.tracker.policy.Visibility;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * {@code vllm_router_kv}: the {@code kv_aware} policy of vllm-project/router with its defaults
 * ({@code src/policies/kv_aware.rs} at dda6063b: {@code KvAwareConfig::default}, {@code
 * select_with_scoring}, {@code select_worker_with_headers}; {@code src/kv_index/scorer.rs} and
 * {@code index.rs} at 2ec0ff0c: {@code PrefixScorer::score}, {@code
 * KVBlockIndex::speculative_insert}).
 *
 * <ol>
 *   <li>Each worker scores its longest run of leading prompt blocks in the router's index, which
 *       holds the blocks the engines' KV events stored and this router's own unexpired speculative
 *       entries (the index keeps no storage tier, so a block offloaded to CPU counts as held).
 *   <li>The request goes to the highest score; of several equal, the last in the worker list
 *       (Rust's {@code max_by_key}).
 *   <li>When no worker scores above 0 (or the prompt has no full block), it goes to the least
 *       loaded worker; of several equal, the first ({@code min_by_key}).
 *   <li>Speculative indexing is on by default: the chosen worker gets entries for the prompt's
 *       blocks beyond the best score, live for 2 s ({@code enable_speculative} true, {@code
 *       speculative_ttl} 2 s), so requests arriving before the KV events see them.
 * </ol>
 *
 * <p>The policy is wired only into the router's vLLM prefill/decode mode ({@code
 * create_vllm_pd_router} in {@code src/routers/factory.rs}; the regular router's policy factory has
 * no {@code kv_aware} arm), where it picks the prefill worker. There the worker's load is this
 * router's count of requests in their prefill stage on it: {@code process_vllm_two_stage_request}
 * in {@code src/routers/http/vllm_pd_router.rs} increments it when the prefill request is sent and
 * decrements it when the prefill response returns. The lab's engines are aggregated, so load here
 * is this router's requests placed on the replica and not yet past their first token. Those two
 * files were read in a code index that does not show their commit; a snapshot of the repository
 * could not be fetched.
 *
 * <p>Which branch: this is the {@code kv_aware} of vllm-project/router PR #130 ("KV events-aware
 * precise cache routing for P/D disaggregation"), whose flags and defaults it matches ({@code
 * --kv-speculative-indexing} true, {@code --kv-speculative-ttl-ms} 2000, {@code --kv-block-size}
 * 16). That PR was open when read, and the router's RFC #294 proposes a different event-driven
 * {@code kv_aware} (load in the score, per-stage cost), so the policy may not be on the router's
 * main branch in this form.
 *
 * <p>Its tokenizer sees the request's text only, so images do not enter its block keys. Each router
 * keeps its own index and speculation; nothing is shared between router replicas.
 */
final class VllmRouterKvPolicy implements Policy {

  static final String NAME = "vllm_router_kv";

  /** {@code KvAwareConfig::default().speculative_ttl}. */
  static final long SPECULATIVE_TTL_MILLIS = 2_000;

  private final SpeculativeBlocks speculative = new SpeculativeBlocks(SPECULATIVE_TTL_MILLIS);
  private final Map<String, Integer> inPrefill = new HashMap<>();
  private int[] prefillCount = new int[16];

  /** The query last scored by {@link #rank} and its best score, for the speculative insert. */
  private RouteQuery scoredQuery;

  private int scoredBest;

  @Override
  public String name() {
    return NAME;
  }

  /** Its own requests and engine-confirmed blocks; its speculation lives in the policy. */
  @Override
  public Visibility visibility() {
    return Visibility.OWN_REQUESTS;
  }

  /** Leading prompt blocks {@code replica} holds by events or by this router's live speculation. */
  int prefixScore(RouteQuery query, MatchResult match, int replica) {
    int n = match.matched(replica);
    while (n < query.keyCount() && speculative.holds(replica, query.keys()[n], query.nowMillis())) {
      n++;
    }
    return n;
  }

  /** This router's requests on {@code replica} that have not finished their prefill. */
  int load(int replica) {
    return replica < prefillCount.length ? prefillCount[replica] : 0;
  }

  @Override
  public int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load) {
    speculative.expire(query.nowMillis());
    scoredQuery = null;
    int[] byLoad = leastLoadedFirst(candidates);
    if (candidates.length == 1 || query.keyCount() == 0) {
      return byLoad;
    }
    int best = candidates[0];
    int bestScore = -1;
    for (int r : candidates) {
      int score = prefixScore(query, match, r);
      if (score >= bestScore) {
        best = r;
        bestScore = score;
      }
    }
    scoredQuery = query;
    scoredBest = bestScore;
    return bestScore == 0 ? byLoad : Ranking.withFirst(byLoad, best);
  }

  /** Candidates by this router's prefill count, the first of equals first. */
  private int[] leastLoadedFirst(int[] candidates) {
    double[] cost = new double[candidates.length];
    for (int i = 0; i < candidates.length; i++) {
      cost[i] = load(candidates[i]);
    }
    return Ranking.ascending(candidates, cost, Ranking.NO_RANDOMNESS);
  }

  /**
   * The peer's speculative insert, after a scored decision: the chosen worker, from the best score
   * to the prompt's end. A decision that skipped scoring (one candidate, no full block) writes
   * none.
   */
  @Override
  public void onRouted(RouteQuery query, MatchResult match, int replica) {
    if (query == scoredQuery) {
      speculative.insert(replica, query.keys(), scoredBest, query.keyCount(), query.nowMillis());
    }
    scoredQuery = null;
  }

  @Override
  public void onReserved(String requestId, RouteQuery query, int replica) {
    if (replica >= prefillCount.length) {
      prefillCount = Arrays.copyOf(prefillCount, Math.max(replica + 1, 2 * prefillCount.length));
    }
    prefillCount[replica]++;
    inPrefill.put(requestId, replica);
  }

  @Override
  public void onPrefillCompleted(String requestId, long nowMillis) {
    Integer replica = inPrefill.remove(requestId);
    if (replica != null && replica < prefillCount.length) {
      prefillCount[replica]--;
    }
  }

  @Override
  public void onReleased(String requestId, long nowMillis) {
    onPrefillCompleted(requestId, nowMillis);
  }

  @Override
  public void onReplicaRemoved(int replica) {
    speculative.dropReplica(replica);
    if (replica < prefillCount.length) {
      prefillCount[replica] = 0;
    }
    inPrefill.values().removeIf(r -> r == replica);
  }
}

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
 * {@code dynamo_kv}: NVIDIA Dynamo's KV router with its default settings. Worker selection now
 * lives in ai-dynamo/dynamo {@code lib/kv-router/src/scheduling/selector/default.rs} (read at
 * a4bdb9bf: {@code DefaultWorkerScorer::worker_logit}, {@code pick_default_worker}, {@code
 * minimum_cost_index}); the older {@code lib/llm/src/kv_router/scheduler.rs} (db19bd2a) it replaced
 * no longer exists. Active blocks follow {@code ActiveSequences::potential_blocks_and_tokens} in
 * {@code lib/llm/src/kv_router/sequence.rs} at 581ee33e; the defaults are {@code
 * KvRouterConfig::default} (overlap credit 1.0 with no decay, prefill load scale 1.0, no
 * per-request decode weight, temperature 0, active blocks tracked with {@code
 * router_assume_kv_reuse}, output blocks not tracked, no replica sync, no predicted-block TTL).
 *
 * <p>For each worker the router asks what its load would be with this request added, counting only
 * the requests this router placed itself:
 *
 * <pre>
 *   prefill_tokens = (prompt tokens − overlap · block size)            this request's uncached part
 *                  + uncached prompt tokens of own requests still in prefill
 *   decode_blocks  = distinct blocks of own requests active on the worker
 *                  + this request's full blocks not among them
 *   logit          = overlap_score_weight · prefill_tokens / block size + decode_blocks
 * </pre>
 *
 * The overlap is the worker's leading prompt blocks in the event-fed index, each weighed by the
 * tier it is best held in: device 1.0, host memory 0.75, disk 0.25 ({@link TierWeights#dynamo()};
 * {@code DefaultWorkerSelector::worker_logit} in ai-dynamo/dynamo {@code
 * lib/kv-router/src/scheduling/selector.rs}, read at 01690d42: {@code overlap_credit_blocks =
 * overlap_score_credit · device + host_cache_hit_weight · host_pinned + disk_cache_hit_weight ·
 * disk}, the host and disk runs extending the device prefix, with {@code KvRouterConfig}'s defaults
 * 0.75 and 0.25). The lowest logit wins; several equal lowest logits go to one of them uniformly at
 * random ({@code minimum_cost_index}, reservoir sampling; drawn here from the lab's seeded
 * generator, so runs repeat). With a temperature above 0 a worker is drawn with probability
 * proportional to {@code exp(−logit / (range · temperature))}, range being the spread of the
 * logits.
 *
 * <p>{@code dynamo_kv_v1_1} keeps the tie-break of the 1.1 release line: equal lowest logits go to
 * the worker with the smallest tree (fewest blocks held by events), then at random. PR #4257 added
 * the tree-size tie-break, PR #6253 made equal trees random, and PR #9516 removed the tree size on
 * main after {@code release/1.1.0} was branched; PR #9975 states that the 1.1 line keeps it.
 *
 * <p>Active blocks are kept per request by {@link ActiveBlocks} from this router's own lifecycle
 * events; prefill tokens come from the ledger, which for this policy holds only own requests (see
 * {@link #visibility()}). Not modelled: the router-side queue that holds requests while every
 * worker is over {@code router_queue_threshold} (the lab places every request on arrival, for every
 * policy), and the five-minute forced expiry of stale requests.
 *
 * <p>{@code dynamo_kv_sync} is {@code dynamo_kv} with {@code router_replica_sync} on, as Dynamo
 * runs several router replicas in front of one pool ({@code --router-replica-sync}: "NATS-based
 * synchronization of local routing decisions", {@code docs/router/kv_cache_routing.md}): each
 * router still keeps its own index from the engines' events, and learns its peers' requests (their
 * workers, prompt blocks and prefill tokens, their prefill's end and their release) after the
 * network delay ({@link ReplicaSync}), so its prefill and active-block loads count the whole pool's
 * requests, not its own share.
 *
 * <p>The variant {@code dynamo_kv_w2} sets {@code overlap_score_weight} to 2: Dynamo's router docs
 * describe a higher weight as trading inter-token latency for TTFT. {@code dynamo_kv_decode} sets
 * it to 0, as Dynamo's disaggregated serving does for its decode router (overlap scoring off).
 */
final class DynamoKvPolicy implements Policy {

  static final String NAME = "dynamo_kv";
  static final String OVERLAP_2 = "dynamo_kv_w2";
  static final String DECODE = "dynamo_kv_decode";
  static final String V1_1 = "dynamo_kv_v1_1";
  static final String SYNC = "dynamo_kv_sync";

  private final String name;
  private final double overlapWeight;
  private final double temperature;
  private final boolean smallestTreeTies;
  private final RandomGenerator random;
  private final ActiveBlocks active = new ActiveBlocks();

  /** The peers' active sequences with {@code router_replica_sync}, or null without it. */
  private final ReplicaSync sync;

  private final int member;

  /**
   * @param smallestTreeTies whether equal lowest logits go to the smallest tree first (1.1), not
   *     straight to a random one of them (main)
   */
  DynamoKvPolicy(
      String name,
      double overlapWeight,
      double temperature,
      boolean smallestTreeTies,
      RandomGenerator random) {
    this(name, overlapWeight, temperature, smallestTreeTies, false, random);
  }

  /**
   * @param replicaSync whether the routers share their active sequences ({@code
   *     router_replica_sync}, through the {@link PeerGroup} open while this policy is created)
   */
  DynamoKvPolicy(
      String name,
      double overlapWeight,
      double temperature,
      boolean smallestTreeTies,
      boolean replicaSync,
      RandomGenerator random) {
    this.sync =
        replicaSync
            ? PeerGroup.joined()
                .channel(SYNC, () -> new ReplicaSync(PeerGroup.joined().delayMillis()))
            : null;
    this.member = sync == null ? -1 : sync.join();
    this.name = name;
    this.overlapWeight = overlapWeight;
    this.temperature = temperature;
    this.smallestTreeTies = smallestTreeTies;
    this.random = random;
  }

  @Override
  public String name() {
    return name;
  }

  /**
   * Dynamo without {@code router_replica_sync} counts only its own requests and, without {@code
   * router_predicted_ttl_secs}, only blocks the engines' events confirmed.
   */
  @Override
  public Visibility visibility() {
    return sync == null ? Visibility.OWN_REQUESTS : REPLICA_SYNC;
  }

  /**
   * With {@code router_replica_sync}: the peers' requests count in the prefill load (the
   * reservation plane) and in the active blocks ({@link ReplicaSync}); still only event-confirmed
   * blocks in the index.
   */
  private static final Visibility REPLICA_SYNC = new Visibility(true, false, 0, false);

  /** The logit of {@code replica}; lower is better. */
  double logit(RouteQuery query, MatchResult match, LoadView load, int replica) {
    long bs = query.blockSize();
    double uncached = Math.max(0, query.promptTokens() - overlapBlocks(match, replica) * bs);
    double prefillBlocks = (uncached + load.prefillTokens(replica)) / bs;
    int decodeBlocks =
        active.activeBlocks(replica) + active.newBlocks(replica, query.keys(), query.keyCount());
    return overlapWeight * prefillBlocks + decodeBlocks;
  }

  /** The matched run with host-memory and disk blocks at Dynamo's credits. */
  static double overlapBlocks(MatchResult match, int replica) {
    TierWeights w = TierWeights.dynamo();
    return match.matched(replica)
        - (1 - w.cpu()) * match.cpu(replica)
        - (1 - w.disk()) * match.disk(replica);
  }

  @Override
  public int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load) {
    if (sync != null) {
      sync.deliver(member, query.nowMillis(), this::applyPeer);
    }
    int n = candidates.length;
    double[] cost = new double[n];
    double min = Double.POSITIVE_INFINITY;
    double max = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < n; i++) {
      cost[i] = logit(query, match, load, candidates[i]);
      min = Math.min(min, cost[i]);
      max = Math.max(max, cost[i]);
    }
    int[] ranked = Ranking.ascending(candidates, cost, random);
    int pick;
    if (temperature > 0) {
      double range = max - min;
      double[] scaled = new double[n];
      for (int i = 0; i < n; i++) {
        scaled[i] = range > 0 ? cost[i] / range : 0;
      }
      pick = candidates[Ranking.softmin(scaled, temperature, random)];
    } else if (smallestTreeTies) {
      pick = smallestTreeAmongCheapest(candidates, cost, min, match);
    } else {
      pick = ranked[0];
    }
    return Ranking.withFirst(ranked, pick);
  }

  /** Among the candidates at the lowest cost, the one with the fewest blocks held; ties random. */
  private int smallestTreeAmongCheapest(
      int[] candidates, double[] cost, double min, MatchResult match) {
    double[] tree = new double[candidates.length];
    for (int i = 0; i < candidates.length; i++) {
      tree[i] = cost[i] == min ? match.blocksHeld(candidates[i]) : Double.POSITIVE_INFINITY;
    }
    return Ranking.ascending(candidates, tree, random)[0];
  }

  /** A peer's {@code AddRequest} or {@code Free}, applied as if this router had placed it. */
  private void applyPeer(ReplicaSync.Event e) {
    if (e.keys() == null) {
      active.remove(e.requestId());
    } else {
      active.add(e.requestId(), e.replica(), e.keys(), e.keys().length);
    }
  }

  @Override
  public void onReserved(String requestId, RouteQuery query, int replica) {
    active.add(requestId, replica, query.keys(), query.keyCount());
    if (sync != null) {
      sync.added(member, query.nowMillis(), requestId, replica, query.keys(), query.keyCount());
    }
  }

  @Override
  public void onReleased(String requestId, long nowMillis) {
    active.remove(requestId);
    if (sync != null) {
      sync.freed(member, Math.max(0, nowMillis), requestId);
    }
  }

  @Override
  public void onReplicaRemoved(int replica) {
    active.dropReplica(replica);
  }
}

package io.kvrouter.tracker.policy;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.IntToDoubleFunction;
import java.util.random.RandomGenerator;

/**
 * kvrouter's policy ({@code kvrouter}): the replica that will return the request's first token
 * soonest, as predicted from the work queued ahead of it there and the part of its prompt the
 * replica has not cached; busy replicas last; concurrent decisions on different routers made to
 * diverge.
 *
 * <p>Per candidate {@code r}:
 *
 * <pre>
 *   own_r    = max(1, promptTokens − bs · (gpu + 0.9·predicted + cpu + 0.25·disk blocks))
 *   load_r   = bs · cpu blocks · cpuLoadMicrosPerToken / 1000        (reloading the CPU-held blocks)
 *   ahead_r  = prefill tokens reserved on r and not yet prefilled (every router's reservations),
 *              less what r has had the time to compute of them (PrefillProgress)
 *            + unseen_r (below)
 *   ttft_r   = timing.ttftMillis(ahead_r, own_r, chunk − running_r, decoding_r, kvUsage_r) + load_r
 *   share_r  = min(1, (written_r / mean written)^e)   e = sessionShare for a request opening a
 *              session with a cached prefix somewhere, else workShare (1 under workShare's default 0)
 *   lag_r    = max(0, mean (observed − predicted) first-token time on r − lagFromMillis)
 *   w        = workWeight, times sessionWork for a request opening a session with a cached prefix
 *              somewhere (the replica gets the session's later turns too)
 *   cost_r   = ttft_r + w · share_r · (timing.computeMillis(own_r) + load_r) + lag_r
 * </pre>
 *
 * {@code lag_r} ({@link ReplicaLag}) charges what the timing model cannot see: a replica out of
 * sequence slots that holds new requests until running ones finish, a slower GPU. It is this
 * router's own observation, so routers may differ on it; beyond ordinary prediction error it is 0.
 *
 * <p>A block the replica holds only in its CPU tier (vLLM's offloading connector) is neither free
 * nor recomputed: the engine loads it back, and the pass that admits the request takes the transfer
 * longer ({@link PolicyConfig#cpuLoadMicrosPerToken}, by default 67 µs per 16-token block against
 * about 250 µs to compute it), which delays this request and the requests batched with it alike. So
 * the CPU copy of a prefix beats a cold replica and loses to the GPU copy, by what the transfer
 * costs rather than by a fixed credit.
 *
 * <p>with {@code timing} an {@link EngineTiming} fitted online ({@link TimingFit}) from this
 * router's observed first tokens. With nothing queued anywhere the smallest {@code own_r} wins,
 * i.e. the longest cached prefix: the policy is exactly cache-greedy at light load and spreads
 * under load, by as much as the queue ahead costs in time. The work term charges a placement the
 * compute its uncached tokens take from the replica's later requests, so recomputing a shared
 * prefix elsewhere is not mistaken for free when it is only as fast as queueing behind its first
 * copy. {@code share_r} (off by default, {@link KvRouterConfig#workShare}) discounts that charge on
 * a replica that has been written less than the candidates' mean over the last minute ({@code
 * written_r}, decayed with the write half-life): its later requests are fewer, so the compute
 * delays fewer of them; this breaks the collapse of a shared-prefix workload onto the one replica
 * that first cached the prefix ({@link WritePressure#shares}).
 *
 * <p>Many routers ({@link KvRouterConfig#concurrency()}). Routers that decide within one
 * propagation delay of each other cannot see each other's reservations. Under {@code unseen} this
 * router learns from the reservation plane how many such unseen peer decisions to expect ({@link
 * PeerConcurrency}), takes its turn among the active routers, and before scoring places the peer
 * decisions due before its turn as phantom requests of the recent typical size, each on the replica
 * with the lowest predicted TTFT for it; near-ties are then resolved by turn as under {@code
 * turns}. Under {@code turns}, near-ties (within {@code max(tieMillis, tieRelative · best)}, and
 * among several routers at least one typical request's compute, {@link KvRouterConfig#unseenBand}:
 * a candidate worse by less than one unseen peer decision would add to the best is as good) go to
 * the candidate at the router's turn in an order every router shares (least recently written first,
 * by replica-id hash among equals), so routers on the same view pick different replicas. Striping
 * ({@link KvRouterConfig#stripe}): the ties and their order come from the view every router shares
 * (this router's reservations of the last propagation delay taken out, {@link OwnUnseen}), and this
 * router's m-th decision its peers have not seen yet takes position {@code turn + routers · m}, so
 * a burst through fewer routers than tied replicas lands on disjoint replicas; with no more ties
 * than routers it falls back to the turn on the router's own view. {@code random} draws near-ties
 * at random, {@code off} takes the first of equal candidates. Under {@code own} (the default), a
 * request no candidate holds any of (a burst of unique prompts: agent fan-out, batch jobs) goes,
 * among its near-ties, to the one holding the fewest of this router's own requests in flight,
 * equals in the replicas' hash order from this router's starting point ({@link
 * NearTies#byOwnLoad}); the ties are found without the peers' reservations of the last {@link
 * KvRouterConfig#blindMillis} ({@link PeerRecent}), which some routers hold and others not yet.
 * Every router spreads its own decisions evenly from a different point, on a view they all share,
 * so together they spread evenly however their reservations interleave. A lone router sends such a
 * request ({@link KvRouterConfig#soloColdByLoad}) to the near-tie on which it has lately started
 * the fewest new prefixes ({@link PrefixFamilies}, {@link NearTies#leastLoaded}): the prefix it
 * starts draws its follow-ups back, so where it lands sets the load that replica carries for as
 * long as they come, which the first token's time alone does not see. In a burst of new prefixes
 * (one decided in the same millisecond as the one before, {@link
 * KvRouterConfig#soloBurstByFamilies}) it takes the fewest of all replicas not busy, not only of
 * the near-ties: the queues then show the order the burst came in, not yet each prefix's followers.
 * Requests with a cached prefix somewhere resolve near-ties as under {@code turns}.
 *
 * <p>Strict mode ({@link RouteQuery#gated()}): a gate admits each decision only if the replica
 * holds no more requests than the router saw there, so decisions on a replica are serialised across
 * routers: the policy takes the near-tie with the fewest requests in flight, whatever its turn
 * (long decodes make a replica running 4 and one running 2 predict the same first token).
 *
 * <p>Intents ({@link KvRouterConfig#intents}). A router holds a request whose uncached prefill
 * takes {@link KvRouterConfig#intentsFromMillis} or more one observed propagation delay (or the
 * long prompt's own wait, if longer; at most {@link KvRouterConfig#holdMaxMillis}), and announces
 * it to its peers as it arrives, with the time it will decide it; shorter requests are decided at
 * once, unannounced. Before deciding, a router places the peers' requests due before its own
 * ({@link PeerIntents}, in an order all routers share) as phantom prefill where each would cost
 * least, and then decides its own; its peers place an announced one alike. Every router decides
 * with the timing model of the router whose id sorts first ({@link SharedTimings}), and takes, for
 * an announced request, of the near-ties the one with the least queued prefill, then the least
 * cost, then the first in an order of the replicas particular to the request ({@link
 * PeerIntents#choose}), so that the placements of one request agree across routers whose views
 * differ slightly; an unannounced one keeps the concurrency mode's tie rule, which spreads what the
 * peers cannot foresee. Intents apply only once a peer has announced one or shared its timing
 * model: routers that do not carry them never wait.
 *
 * <p>Cold leads ({@link KvRouterConfig#coldLeadFromMillis}). Among several routers, a prompt no
 * replica holds any of, arriving together with another such prompt, is decided at once only by the
 * router first in turn; the others hold it in steps of a late delay and a millisecond, up to one
 * step per turn (at most its own compute time), and follow as soon as a router before them has
 * started its prefix: to the replica holding the most of it, whatever the cost, when that is most
 * of the prompt ({@link KvRouterConfig#coldFollowShare}), since the cost cannot see the followers
 * still held on every router for the prefixes the other replicas hold. One still new at the end
 * goes to a near-tie, on the view the wait brought, where the routers have lately started the
 * fewest prefixes ({@link PrefixFamilies}, the peers' counted from their reservations of a whole
 * prompt), if a peer's start came into view meanwhile. A burst of requests in groups that share a
 * new prefix (a group's system prompt, an agent's fan-out) is otherwise started on as many replicas
 * as routers received one of the group. A lone new prompt does not wait; the first of a burst to
 * reach a router waits {@link KvRouterConfig#coldLookMillis} for the rest ({@link
 * #holdMoreMillis}).
 *
 * <p>Near-ties are resolved by {@link NearTies}.
 *
 * <p>Cost: O(n · (phantoms + 1 + unseen)) per decision over n candidates, plus the ranking's O(n
 * log n); phantoms are at most the expected concurrent peer decisions, unseen the own decisions of
 * the last propagation delay (a handful; at most {@value OwnUnseen#CAPACITY}). No per-decision
 * allocation beyond the former rule's.
 */
final class TtftPolicy implements Policy {

  /** Weight of a new size in the running typical decision size. */
  private static final double TYPICAL_ALPHA = 0.05;

  /** Own requests awaiting their first token, kept for the fit; bounded against leaks. */
  private static final int MAX_PENDING = 1 << 16;

  private final String name;
  private final PolicyConfig config;
  private final KvRouterConfig k;
  private final TimingFit fit;
  private final PeerConcurrency peers;
  private final Map<String, double[]> pending =
      new LinkedHashMap<>(64, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, double[]> eldest) {
          return size() > MAX_PENDING;
        }
      };
  private final WritePressure writes = new WritePressure();
  private final OwnUnseen unseenOwn = new OwnUnseen();
  private final OwnInFlight ownLoad = new OwnInFlight();
  private final PrefixFamilies families;
  private final PeerRecent peerRecent = new PeerRecent();
  private final PrefillProgress progress = new PrefillProgress();
  private final ReplicaLag lag;
  private final NearTies ties;
  private double lastOwnTokens;
  private double typicalTokens = 2048;
  private boolean typicalKnown;
  // Scratch of the last rank(), indexed like its candidates.
  private int[] lastCandidates = new int[0];
  private double[][] lastFeatures = new double[0][];
  // Scratch: the first-token time each candidate was predicted (for ReplicaLag).
  private double[] lastPredicted = new double[0];
  // Scratch: costs on the view every router shares (own unseen reservations taken out).
  private double[] sharedCost = new double[0];
  // Scratch: costs without the peers' reservations of the last few delays (concurrency "own").
  private double[] blindCost = new double[0];
  private double[] recentByReplica = new double[16];
  private final PeerIntents intents = new PeerIntents();
  // Under intents: this router's own recent reservations, left out of the intents due before them.
  private final PeerRecent ownRecent = new PeerRecent();
  private double[] ownByReplica = new double[16];
  private final SharedTimings sharedTimings = new SharedTimings();
  private String routerId = "";
  // When the last prompt that could lead arrived, ms ({@link #coldLeadMillis}); none yet:
  // MIN_VALUE.
  private long lastColdMillis = Long.MIN_VALUE;
  // The one before it, to tell company from the prompt itself ({@link #holdMoreMillis}).
  private long previousColdMillis = Long.MIN_VALUE;
  // When a cold lead's wait last ended: it is decided at once, on what the wait brought.
  private long coldLedMillis = Long.MIN_VALUE;
  // When a held cold lead last found most of its prompt started: decided next, on the holder.
  private long coldFollowMillis = Long.MIN_VALUE;
  // When a lone router last decided a prompt no replica held any of.
  private long lastSoloColdMillis = Long.MIN_VALUE;
  // When a peer's reservation of a whole prompt (a prefix it started) last arrived.
  private long lastPeerStartMillis = Long.MIN_VALUE;

  /**
   * @param name {@code kvrouter}, or a lab variant that names its concurrency mode ({@code
   *     kvrouter_off}, {@code kvrouter_random}, {@code kvrouter_turns}, {@code kvrouter_unseen},
   *     {@code kvrouter_own})
   */
  TtftPolicy(String name, PolicyConfig config, RandomGenerator random) {
    this.name = name;
    this.config = config;
    this.k = config.kvrouter();
    this.fit = new TimingFit(EngineTiming.MOCKER, 0.5, k.fitForgetting(), 3.0);
    this.families = new PrefixFamilies(Math.max(1, k.familyHalfLifeMillis()));
    this.lag = new ReplicaLag(k.lagFromMillis(), k.lagHalfLifeMillis(), k.lagWarmup());
    this.peers = new PeerConcurrency(k.horizonMillis(), k.rotationMillis(), k.maxDelayMillis());
    this.ties = new NearTies(k, random, peers, writes, unseenOwn);
  }

  @Override
  public String name() {
    return name;
  }

  /** The timing this policy predicts with now. */
  EngineTiming timing() {
    return fit.current();
  }

  /** Uncached prompt tokens of {@code replica}: at least one, as an engine always computes one. */
  double ownTokens(RouteQuery query, MatchResult match, int replica) {
    double cached = config.cachedBlocksLoadingCpu(match, replica) * query.blockSize();
    return Math.max(1, query.promptTokens() - cached);
  }

  /** The fewest uncached prompt tokens of {@code query} on any of {@code candidates}. */
  private double leastOwn(RouteQuery query, int[] candidates, MatchResult match) {
    double least = Double.POSITIVE_INFINITY;
    for (int r : candidates) {
      least = Math.min(least, ownTokens(query, match, r));
    }
    return least;
  }

  /** Prefill tokens per pass left over by the running requests' decode tokens. */
  private double chunk(LoadView load, int replica) {
    return Math.max(k.chunkTokens() / 2.0, k.chunkTokens() - load.running(replica));
  }

  private static boolean decoding(LoadView load, int replica) {
    return load.decodeTokens(replica) > 0 || load.running(replica) > 0;
  }

  private double ttft(EngineTiming t, double ahead, double own, LoadView load, int replica) {
    return t.ttftMillis(
        ahead, own, chunk(load, replica), decoding(load, replica), load.kvUsage(replica));
  }

  @Override
  public int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load) {
    int n = candidates.length;
    long now = query.nowMillis();
    boolean intentsOn = intentsOn(query);
    EngineTiming t = intentsOn ? sharedTimings.leader(routerId, fit.current(), now) : fit.current();
    double[] unseen = unseenLoad(t, candidates, load, now);
    // Under intents, the replicas' ids once: the placement and this decision's order both read
    // them.
    String[] ids = intentsOn ? ids(candidates, load) : null;
    double[] prefill =
        intentsOn ? placeIntents(t, candidates, ids, load, now, unseen, query.blockSize()) : null;
    double[] cost = new double[n];
    double[] uncached = new double[n];
    boolean anyFree = false;
    if (lastFeatures.length < n) {
      lastFeatures = new double[n][EngineTiming.SIZE];
      lastPredicted = new double[n];
    }
    boolean striping = striping(query, now);
    double extraBand =
        k.unseenBand() > 0 && amongPeers(query)
            ? k.unseenBand() * t.computeMillis(typicalTokens)
            : 0;
    if (sharedCost.length < n) {
      sharedCost = new double[n];
      blindCost = new double[n];
    }
    for (int i = 0; i < n; i++) {
      uncached[i] = ownTokens(query, match, candidates[i]);
    }
    boolean cold = cold(query, uncached, n);
    // What the decision counts as this request's own tokens on each replica (see placed()); the
    // timing fit learns from what the replicas will really compute.
    double[] own = cold ? uncached : placed(query, uncached, n);
    double[] share = writes.shares(candidates, now, shareExponent(query, cold));
    double workWeight = k.workWeight() * (opening(query, cold) ? k.sessionWork() : 1);
    long recentSince = cold ? blindSince(query, now) : Long.MAX_VALUE;
    if (recentSince != Long.MAX_VALUE) {
      recentByReplica = peerRecent.prefillSince(recentSince, recentByReplica);
    }
    for (int i = 0; i < n; i++) {
      int r = candidates[i];
      double ahead = queuedPrefill(t, load, r, now) + unseen[i];
      double reload = config.cpuLoadMillis(match, r, query.blockSize());
      double queued = ttft(t, ahead, own[i], load, r);
      cost[i] =
          queued
              + reload
              + workWeight * share[i] * (t.computeMillis(own[i]) + reload)
              + lag.charge(r, now);
      lastPredicted[i] = (own == uncached ? queued : ttft(t, ahead, uncached[i], load, r)) + reload;
      sharedCost[i] = cost[i];
      blindCost[i] = cost[i];
      double recent =
          recentSince == Long.MAX_VALUE || r >= recentByReplica.length ? 0 : recentByReplica[r];
      if (recent > 0) {
        blindCost[i] += ttft(t, Math.max(0, ahead - recent), own[i], load, r) - queued;
      }
      double hidden = striping ? unseenOwn.prefillOn(r) : 0;
      if (hidden > 0) {
        sharedCost[i] += ttft(t, Math.max(0, ahead - hidden), own[i], load, r) - queued;
      }
      EngineTiming.features(
          ahead - unseen[i] + uncached[i],
          chunk(load, r),
          decoding(load, r),
          load.kvUsage(r),
          lastFeatures[i]);
      anyFree |= !config.busy(load, r);
    }
    lastCandidates = candidates;
    if (anyFree) {
      for (int i = 0; i < n; i++) {
        if (config.busy(load, candidates[i])) {
          cost[i] = Double.POSITIVE_INFINITY;
          sharedCost[i] = Double.POSITIVE_INFINITY;
          blindCost[i] = Double.POSITIVE_INFINITY;
        }
      }
    }
    boolean follows = !cold && coldFollowMillis == now;
    coldFollowMillis = Long.MIN_VALUE;
    int[] onHolder =
        follows ? leastThenCheapest(candidates, i -> own[i], query.blockSize(), cost) : null;
    if (onHolder != null) {
      return onHolder;
    }
    if (intentsOn && announced(own, n)) {
      return intentRanking(query, candidates, ids, cost, own, prefill, unseen);
    }
    return switch (k.concurrency()) {
      case "off" -> Ranking.ascending(candidates, cost, Ranking.NO_RANDOMNESS);
      case "random" -> ties.atRandom(candidates, cost, own, query.blockSize(), extraBand);
      default -> {
        int bs = query.blockSize();
        if (query.gated() && k.strictFirst()) {
          yield ties.leastLoaded(
              candidates, cost, own, bs, load, now, extraBand, false, load::inFlight);
        }
        if (!"own".equals(k.concurrency())) {
          yield ties.byTurn(
              candidates,
              cost,
              striping ? sharedCost : cost,
              own,
              bs,
              load,
              now,
              striping,
              extraBand);
        }
        if (cold && alone(query) && k.soloColdByLoad()) {
          boolean burst = lastSoloColdMillis == now;
          lastSoloColdMillis = now;
          int[] fewest =
              burst && k.soloBurstByFamilies() && k.familyHalfLifeMillis() > 0
                  ? leastThenCheapest(candidates, i -> families.on(candidates[i], now), 0, cost)
                  : null;
          if (fewest != null) {
            yield fewest;
          }
          yield ties.leastLoaded(
              candidates, cost, own, bs, load, now, extraBand, true, soloLoad(load, now));
        }
        if (cold && coldLedMillis == now && amongPeers(query)) {
          // A cold lead that waited for the routers before it: the prefixes they started are in
          // view now, the near-ties found with their reservations, and the prefix goes where the
          // fewest were lately started by any router.
          yield ties.leastLoaded(
              candidates, cost, own, bs, load, now, extraBand, false, r -> families.on(r, now));
        }
        if (peers.routers(now) <= 1 || !cold) {
          yield ties.byTurn(candidates, cost, cost, own, bs, load, now, false, extraBand);
        }
        yield ties.byOwnLoad(
            candidates, cost, blindCost, own, bs, load, now, extraBand, ownLoad::on);
      }
    };
  }

  /**
   * The candidates by cost, first among them of those not busy (a finite {@code cost}) the one with
   * the least {@code key} (a function of the candidate's index), of those within {@code slack} of
   * that least the cheapest; null if all are busy. A held cold lead's holder ({@link
   * KvRouterConfig#coldFollowShare}: the key its uncached tokens, the slack a block), or a lone
   * router's new prefix in a burst ({@link KvRouterConfig#soloBurstByFamilies}: the prefixes lately
   * started there).
   */
  private static int[] leastThenCheapest(
      int[] candidates, IntToDoubleFunction key, double slack, double[] cost) {
    int at = -1;
    double least = 0;
    for (int i = 0; i < candidates.length; i++) {
      if (cost[i] == Double.POSITIVE_INFINITY) {
        continue;
      }
      double k = key.applyAsDouble(i);
      if (at < 0 || k < least - slack || (k <= least + slack && cost[i] < cost[at])) {
        at = i;
        least = k;
      }
    }
    return at < 0
        ? null
        : Ranking.withFirst(
            Ranking.ascending(candidates, cost, Ranking.NO_RANDOMNESS), candidates[at]);
  }

  /**
   * Under intents: places the peers' requests due before this decision as phantom prefill in {@code
   * unseen} ({@link PeerIntents#place}); returns each candidate's queued prefill.
   */
  private double[] placeIntents(
      EngineTiming t,
      int[] candidates,
      String[] ids,
      LoadView load,
      long now,
      double[] unseen,
      int blockSize) {
    int n = candidates.length;
    double[] prefill = new double[n];
    for (int i = 0; i < n; i++) {
      prefill[i] = queuedPrefill(t, load, candidates[i], now);
    }
    intents.place(
        routerId,
        now,
        candidates,
        ids,
        prefill,
        unseen,
        since -> ownSince(candidates, since),
        (i, tokens, ahead) -> {
          int r = candidates[i];
          if (config.busy(load, r)) {
            return Double.POSITIVE_INFINITY;
          }
          return ttft(t, ahead, tokens, load, r) + k.workWeight() * t.computeMillis(tokens);
        },
        this::intentBand,
        blockSize);
    return prefill;
  }

  /**
   * Under intents: this router's own prefill reserved on each of {@code candidates} at or after
   * {@code fromMillis} ({@link PeerIntents.OwnSince}).
   */
  private double[] ownSince(int[] candidates, long fromMillis) {
    ownByReplica = ownRecent.prefillSince(fromMillis - 1, ownByReplica);
    double[] out = new double[candidates.length];
    for (int i = 0; i < out.length; i++) {
      int r = candidates[i];
      out[i] = r < ownByReplica.length ? ownByReplica[r] : 0;
    }
    return out;
  }

  /** The near-tie band above a best cost under intents: the tie band, without the unseen one. */
  private double intentBand(double best) {
    return ties.band(best, 0);
  }

  /**
   * Under intents, whether a request whose least uncached prefill on any candidate is {@code
   * leastTokens} is announced to the peers (and held): its prefill takes {@link
   * KvRouterConfig#intentsFromMillis} or more.
   */
  private boolean announced(double leastTokens) {
    return fit.current().computeMillis(leastTokens) >= k.intentsFromMillis();
  }

  /** {@link #announced(double)} of the least of the first {@code n} of {@code own}. */
  private boolean announced(double[] own, int n) {
    double least = Double.POSITIVE_INFINITY;
    for (int i = 0; i < n; i++) {
      least = Math.min(least, own[i]);
    }
    return announced(least);
  }

  /**
   * Under intents: the candidates by cost, the near-tie {@link PeerIntents#choose} picks first, as
   * every router picks it (its peers know this request by this router's id and its prompt size).
   */
  private int[] intentRanking(
      RouteQuery query,
      int[] candidates,
      String[] ids,
      double[] cost,
      double[] own,
      double[] prefill,
      double[] unseen) {
    int n = candidates.length;
    double[] ahead = new double[n];
    for (int i = 0; i < n; i++) {
      ahead[i] = prefill[i] + unseen[i];
    }
    long[] order = PeerIntents.order(routerId, query.promptTokens(), ids);
    int chosen = PeerIntents.choose(cost, own, ahead, order, this::intentBand, query.blockSize());
    int[] ranked = Ranking.ascending(candidates, cost, Ranking.NO_RANDOMNESS);
    return chosen < 0 ? ranked : Ranking.withFirst(ranked, candidates[chosen]);
  }

  /** The replica ids of {@code candidates}, which every router names alike. */
  private static String[] ids(int[] candidates, LoadView load) {
    String[] ids = new String[candidates.length];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = load.id(candidates[i]);
    }
    return ids;
  }

  /**
   * Among several routers, ungated: a request whose uncached prefill is long waits a few
   * propagation delays before it is decided, longer the longer it is ({@link DecisionHold}). A lone
   * router, ungated, holds it {@link KvRouterConfig#soloHoldMillis} per size class instead, so the
   * smaller requests that reached it in the same instant are decided first. Among several routers,
   * a prompt no replica holds waits at least for the routers before this one in turn ({@link
   * #coldLeadMillis}).
   */
  @Override
  public long holdMillis(RouteQuery query, int[] candidates, MatchResult match) {
    if (!mayHold(query)) {
      return 0;
    }
    double least = leastOwn(query, candidates, match);
    boolean intentsOn = intentsOn(query);
    boolean peered = amongPeers(query) || intentsOn;
    boolean burst = peered && burstHold(query.nowMillis());
    long hold =
        DecisionHold.millis(
            fit.current().computeMillis(least),
            burst ? burstHoldFrom() : k.holdFromMillis(),
            k.holdClasses(),
            burst ? k.burstHoldStep() : peered ? k.holdStep() : 1,
            peered ? peers.lateDelayMillis(k.delayPriorMillis()) : k.soloHoldMillis(),
            k.holdMaxMillis());
    hold = Math.max(hold, coldLeadMillis(query, least));
    if (intentsOn && announced(least)) {
      double wait = Math.ceil(peers.lateDelayMillis(k.delayPriorMillis())) + 1;
      hold = Math.max(hold, (long) Math.min(wait, k.holdMaxMillis()));
    }
    return hold;
  }

  /**
   * How long a prompt no candidate holds any of ({@code least}, its fewest uncached tokens, is all
   * of it) waits first for the routers before this one in turn ({@link PeerConcurrency#turn}) to
   * start the prefixes of the same burst ({@link KvRouterConfig#coldLeadFromMillis}): one step of a
   * late delay and 1 ms, then more steps ({@link #holdMoreMillis}) while no replica holds any of
   * it, in all at most turn × step, the prompt's own compute time and {@link
   * KvRouterConfig#holdMaxMillis}; 0 when it may not wait, is first in turn, or could not wait one
   * step (a propagation delay longer than the prompt's compute: it would decide as blind). It waits
   * only in company: when another such prompt reached this router within one step before it. New
   * prefixes arriving together are the mark of a batch or a fan-out, whose siblings reach the peers
   * too; a lone new conversation shares its prefix with nothing in flight, and waiting would only
   * cost it. A prompt alone so far looks for company {@link KvRouterConfig#coldLookMillis} first:
   * the first of a burst to reach this router. Records the arrival (called once per request, as it
   * arrives).
   */
  private long coldLeadMillis(RouteQuery query, double least) {
    if (!coldLeads(query) || least < Math.max(1, query.promptTokens())) {
      return 0;
    }
    long now = query.nowMillis();
    boolean company = lastColdMillis != Long.MIN_VALUE && now - lastColdMillis <= coldStepMillis();
    previousColdMillis = lastColdMillis;
    lastColdMillis = now;
    if (peers.turn(query.nowMillis()) == 0 || coldWaitMillis(query) < coldStepMillis()) {
      return 0; // first in turn, or the routers before it could not be seen in time
    }
    if (told(query, least)) {
      // Announced with the time it will be decided: one hold, the whole wait, and no look.
      return company ? (long) coldWaitMillis(query) : 0;
    }
    return company ? coldStep(query, 0) : (long) Math.ceil(k.coldLookMillis());
  }

  /** Whether {@code query} is announced to the peers as an intent, {@code least} uncached. */
  private boolean told(RouteQuery query, double least) {
    return intentsOn(query) && announced(least);
  }

  /**
   * A prompt no candidate holds any of, held {@code heldMillis} (a look for company, a step of its
   * cold lead, or another hold), waits one more step of its cold lead ({@link #coldStep}) while no
   * replica holds any of it yet, if another such prompt arrived since, or within a step before it.
   * Once a router before it has started the prefix it follows that at once, and is placed there
   * whatever the cost when the prefix is most of the prompt ({@link
   * KvRouterConfig#coldFollowShare}).
   */
  @Override
  public long holdMoreMillis(
      RouteQuery query, int[] candidates, MatchResult match, long heldMillis) {
    if (!coldLeads(query)) {
      return 0;
    }
    double prompt = Math.max(1, query.promptTokens());
    double least = leastOwn(query, candidates, match);
    if (least < prompt) {
      if (k.coldFollowShare() > 0 && prompt - least >= k.coldFollowShare() * prompt) {
        coldFollowMillis = query.nowMillis(); // mostly the started prefix: decided on that
      }
      return 0; // started somewhere by now: it follows that
    }
    if (told(query, prompt)) {
      return 0; // announced: decided when its peers expect it
    }
    long arrived = query.nowMillis() - heldMillis;
    // Its own arrival is the latest such one at most; a second one within the window is company.
    boolean company =
        previousColdMillis != Long.MIN_VALUE
            && previousColdMillis >= arrived - coldStepMillis()
            && lastColdMillis >= arrived;
    long more = company ? coldStep(query, heldMillis) : 0;
    if (more == 0 && company && lastPeerStartMillis >= arrived) {
      // Decided next, on the view the wait brought: a peer's start has come into view since it
      // arrived (not so behind a delay longer than the wait: it decides as blind as at once).
      coldLedMillis = query.nowMillis();
    }
    return more;
  }

  /**
   * The next wait of a cold lead held {@code heldMillis} so far: one step ({@link
   * #coldStepMillis}), at most what is left of its whole wait ({@link #coldWaitMillis}).
   */
  private long coldStep(RouteQuery query, long heldMillis) {
    return (long) Math.max(0, Math.min(coldStepMillis(), coldWaitMillis(query) - heldMillis));
  }

  /**
   * A cold lead's whole wait: turn × step, at most the prompt's own compute time and {@link
   * KvRouterConfig#holdMaxMillis}.
   */
  private double coldWaitMillis(RouteQuery query) {
    double compute = fit.current().computeMillis(Math.max(1, query.promptTokens()));
    double turns = peers.turn(query.nowMillis()) * coldStepMillis();
    return Math.min(turns, Math.min(compute, k.holdMaxMillis()));
  }

  /** A cold lead's step: a late delay and 1 ms, whole; also how close company arrives. */
  private double coldStepMillis() {
    return Math.ceil(peers.lateDelayMillis(k.delayPriorMillis())) + 1;
  }

  /**
   * Whether {@code query} may wait for the routers before this one in turn ({@link
   * #coldLeadMillis}): among several routers, its prompt long enough.
   */
  private boolean coldLeads(RouteQuery query) {
    return k.coldLeadFromMillis() > 0
        && amongPeers(query)
        && fit.current().computeMillis(Math.max(1, query.promptTokens())) >= k.coldLeadFromMillis();
  }

  /**
   * What a lone router's new prefix weighs the near-ties by ({@link
   * KvRouterConfig#familyHalfLifeMillis}): the prefixes it has lately started on each, or with a
   * half-life of 0 the requests in flight there.
   */
  private IntToDoubleFunction soloLoad(LoadView load, long now) {
    return k.familyHalfLifeMillis() > 0 ? r -> families.on(r, now) : load::inFlight;
  }

  /**
   * Prefill tokens queued on {@code r} still to compute: all of the view's ({@code
   * LoadView#prefillTokens}), or under {@link KvRouterConfig#prefillProgress} what is left of them
   * after the time the replica has spent on them ({@link PrefillProgress}), at the rate of full
   * chunks.
   */
  private double queuedPrefill(EngineTiming t, LoadView load, int r, long now) {
    long queued = load.prefillTokens(r);
    if (!k.prefillProgress()) {
      return queued;
    }
    double c = chunk(load, r);
    double perMilli = c / Math.max(1e-3, ttft(t, 0, c, load, r));
    return progress.remaining(r, queued, now, perMilli);
  }

  /** Only a prompt that would wait uncached can wait: its cached prefix only shortens it. */
  @Override
  public boolean mayHold(RouteQuery query) {
    if (intentsOn(query) || coldLeads(query)) {
      return true;
    }
    double from;
    if (amongPeers(query)) {
      from = burstHold(query.nowMillis()) ? burstHoldFrom() : k.holdFromMillis();
    } else if (alone(query) && k.soloHoldMillis() > 0) {
      from = k.holdFromMillis();
    } else {
      return false;
    }
    return from > 0 && fit.current().computeMillis(Math.max(1, query.promptTokens())) >= from;
  }

  /**
   * Whether the hold among several routers takes its burst settings ({@link
   * KvRouterConfig#burstHoldFromMillis} and {@link KvRouterConfig#burstHoldStep}) rather than
   * {@link KvRouterConfig#holdFromMillis} and {@link KvRouterConfig#holdStep}: holding is on, the
   * burst threshold is set, and requests lately come in bursts (this router's decisions have each
   * been met by at least {@link KvRouterConfig#burstConcurrency} peer decisions within one delay,
   * on average).
   */
  private boolean burstHold(long nowMillis) {
    return k.holdFromMillis() > 0
        && k.burstHoldFromMillis() > 0
        && peers.concurrentMean(nowMillis) >= k.burstConcurrency();
  }

  /** The threshold in bursts: the burst setting, never above the usual one. */
  private double burstHoldFrom() {
    return Math.min(k.holdFromMillis(), k.burstHoldFromMillis());
  }

  /**
   * Whether the decision is ungated, among several routers, under {@link KvRouterConfig#intents},
   * and a peer announced an intent or shared its timing lately: routers whose peers do not carry
   * intents never wait for them.
   */
  private boolean intentsOn(RouteQuery query) {
    long now = query.nowMillis();
    // The field comparison first: a lone router (the decision benchmark's) stops there.
    return k.intents()
        && !query.gated()
        && intents.heardSince(now - k.horizonMillis())
        && peers.routers(now) > 1;
  }

  /** Whether the decision is ungated and this router has heard from no peer. */
  private boolean alone(RouteQuery query) {
    return !query.gated() && peers.routers(query.nowMillis()) <= 1;
  }

  /**
   * Whether the decision is taken among several routers that cannot see it at once: ungated, with
   * peers heard from, concurrency not {@code off}.
   */
  private boolean amongPeers(RouteQuery query) {
    return !query.gated() && !"off".equals(k.concurrency()) && peers.routers(query.nowMillis()) > 1;
  }

  /**
   * The exponent of the replicas' write shares that scales this request's work term: {@link
   * KvRouterConfig#sessionShare} for a request that opens a session and finds part of its prompt
   * cached (its later turns will follow it wherever it goes), else {@link
   * KvRouterConfig#workShare}.
   */
  private double shareExponent(RouteQuery query, boolean cold) {
    return opening(query, cold) ? k.sessionShare() : k.workShare();
  }

  /**
   * Whether {@code query} opens a session and finds part of its prompt cached somewhere: the
   * replica it lands on gets the session's later turns too ({@link KvRouterConfig#sessionShare},
   * {@link KvRouterConfig#sessionWork}).
   */
  private static boolean opening(RouteQuery query, boolean cold) {
    return query.opensSession() && !cold;
  }

  /**
   * {@code uncached}, or the whole prompt on every replica when no replica holds {@link
   * KvRouterConfig#coldMatchShare} of it: a prefix that short (one block every prompt opens with, a
   * system prompt) would otherwise make each replica that has not yet computed it look slower for
   * every request by that prefix's compute, and never get one. Called only when the prompt is not
   * cold (some replica holds part of it).
   */
  private double[] placed(RouteQuery query, double[] uncached, int n) {
    double prompt = Math.max(1, query.promptTokens());
    double least = prompt;
    for (int i = 0; i < n; i++) {
      least = Math.min(least, uncached[i]);
    }
    if (prompt - least >= k.coldMatchShare() * prompt) {
      return uncached;
    }
    double[] whole = new double[n];
    Arrays.fill(whole, prompt);
    return whole;
  }

  /** Whether no candidate holds any of the prompt: {@code own} is each one's uncached tokens. */
  private static boolean cold(RouteQuery query, double[] own, int n) {
    for (int i = 0; i < n; i++) {
      if (own[i] < Math.max(1, query.promptTokens())) {
        return false;
      }
    }
    return true;
  }

  /**
   * Under {@code own}, among several routers, ungated (asked for cold requests only): peer
   * reservations decided after the returned time are left out of the near-ties ({@link
   * PeerRecent}): those of the last two observed propagation delays (the prior before any was
   * observed). {@code Long.MAX_VALUE} otherwise: none left out.
   */
  private long blindSince(RouteQuery query, long now) {
    if (!"own".equals(k.concurrency()) || !amongPeers(query)) {
      return Long.MAX_VALUE;
    }
    return now
        - (long)
            Math.ceil(Math.max(k.blindMillis(), 2 * peers.lateDelayMillis(k.delayPriorMillis())));
  }

  /**
   * Whether this decision stripes over the shared view ({@link KvRouterConfig#stripe}): ungated,
   * among several routers. Forgets the own reservations the peers have seen by now.
   */
  private boolean striping(RouteQuery query, long now) {
    if (!k.stripe() || query.gated() || "off".equals(k.concurrency())) {
      return false;
    }
    unseenOwn.prune(now, peers.unseenWindowMillis(k.delayPriorMillis()));
    return peers.routers(now) > 1;
  }

  /**
   * Under {@code unseen}: per candidate, the prefill tokens of the peer decisions expected before
   * this router's turn, placed one by one where each would be served first. Zero otherwise.
   */
  private double[] unseenLoad(EngineTiming t, int[] candidates, LoadView load, long now) {
    int n = candidates.length;
    double[] unseen = new double[n];
    if (!"unseen".equals(k.concurrency())) {
      return unseen;
    }
    int routers = peers.routers(now);
    if (routers <= 1) {
      return unseen;
    }
    double ahead = peers.expectedUnseen(now) * peers.turn(now) / (routers - 1);
    double size = typicalTokens;
    while (ahead > 1e-3) {
      double weight = Math.min(1, ahead);
      int best = -1;
      double bestCost = Double.POSITIVE_INFINITY;
      for (int i = 0; i < n; i++) {
        int r = candidates[i];
        if (config.busy(load, r)) {
          continue;
        }
        double c = ttft(t, load.prefillTokens(r) + unseen[i], size, load, r);
        if (c < bestCost) {
          bestCost = c;
          best = i;
        }
      }
      if (best < 0) {
        break;
      }
      unseen[best] += weight * size;
      ahead -= weight;
    }
    return unseen;
  }

  private void learnTypical(double tokens) {
    typicalTokens =
        typicalKnown ? (1 - TYPICAL_ALPHA) * typicalTokens + TYPICAL_ALPHA * tokens : tokens;
    typicalKnown = true;
  }

  // ------------------------------------------------------------------ feedback

  @Override
  public void bindRouter(String routerId) {
    this.routerId = routerId;
    peers.bind(routerId);
  }

  /**
   * Learns the typical size of a decision and the write pressure from this router's own too, and
   * counts a prompt no replica held any of as a prefix started on {@code replica}.
   */
  @Override
  public void onRouted(RouteQuery query, MatchResult match, int replica) {
    double own = ownTokens(query, match, replica);
    learnTypical(own);
    writes.add(replica, own, query.nowMillis());
    if (match.longest() == 0) {
      families.started(replica, query.nowMillis());
    }
    lastOwnTokens = own;
  }

  @Override
  public void onReserved(String requestId, RouteQuery query, int replica) {
    peers.ownDecided(query.nowMillis());
    progress.reserved(replica, query.nowMillis());
    ownLoad.reserved(requestId, replica);
    if (k.intents()) {
      ownRecent.add(replica, lastOwnTokens, query.nowMillis(), query.nowMillis());
    }
    if (k.stripe() && !query.gated() && peers.routers(query.nowMillis()) > 1) {
      // Only striping reads them, and only among several routers.
      unseenOwn.add(requestId, replica, lastOwnTokens, lastOwnTokens, query.nowMillis());
    }
    for (int i = 0; i < lastCandidates.length; i++) {
      if (lastCandidates[i] == replica) {
        double[] entry = Arrays.copyOf(lastFeatures[i], EngineTiming.SIZE + 3);
        entry[EngineTiming.SIZE] = query.nowMillis();
        entry[EngineTiming.SIZE + 1] = replica;
        entry[EngineTiming.SIZE + 2] = lastPredicted[i];
        pending.put(requestId, entry);
        return;
      }
    }
  }

  @Override
  public void onPrefillCompleted(String requestId, long nowMillis) {
    unseenOwn.prefilled(requestId);
    double[] p = pending.remove(requestId);
    if (p == null || nowMillis < 0) {
      return;
    }
    int replica = (int) p[EngineTiming.SIZE + 1];
    progress.prefilled(replica, nowMillis);
    lag.observed(replica, nowMillis - p[EngineTiming.SIZE], p[EngineTiming.SIZE + 2], nowMillis);
    if (!k.fitTiming()) {
      return;
    }
    fit.observe(p, nowMillis - p[EngineTiming.SIZE]);
  }

  @Override
  public void onReleased(String requestId, long nowMillis) {
    pending.remove(requestId);
    unseenOwn.released(requestId);
    ownLoad.released(requestId);
  }

  @Override
  public double lagMillis(int replica, long nowMillis) {
    return lag.millis(replica, nowMillis);
  }

  @Override
  public void onReplicaRemoved(int replica) {
    unseenOwn.forgetReplica(replica);
    ownLoad.forget(replica);
    peerRecent.forget(replica);
    ownRecent.forget(replica);
    lag.forget(replica);
    progress.forget(replica);
    families.forget(replica);
  }

  /**
   * A new engine process answers late for reasons that pass: its lag starts over, warm-up too. Its
   * cache is empty: the prefixes started there are gone, their next requests start them afresh.
   */
  @Override
  public void onReplicaStartedAfresh(int replica) {
    lag.forget(replica);
    families.forget(replica);
  }

  @Override
  public boolean readsIntents() {
    return k.intents();
  }

  /**
   * Only a request whose uncached prefill takes {@link KvRouterConfig#intentsFromMillis} or more is
   * announced: a shorter one held for another reason (a cold lead) would only show the peers
   * phantom work that it may never bring (it follows a prefix a peer starts meanwhile).
   */
  @Override
  public boolean announces(double leastUncached) {
    return k.intents() && announced(leastUncached);
  }

  @Override
  public void onPeerIntent(PeerIntent intent, int[] candidates, double[] uncached, long nowMillis) {
    intents.add(
        intent.origin(),
        intent.decideAtMillis(),
        intent.promptTokens(),
        candidates,
        uncached,
        nowMillis);
  }

  @Override
  public double uncachedTokens(RouteQuery query, MatchResult match, int replica) {
    return ownTokens(query, match, replica);
  }

  @Override
  public EngineTiming timingToShare() {
    return k.intents() ? fit.current() : null;
  }

  @Override
  public void onPeerTiming(String origin, EngineTiming timing, long nowMillis) {
    sharedTimings.heard(origin, timing, nowMillis, k.horizonMillis());
    intents.heard(nowMillis);
    // The peer is a live router too: intents need both, so one message turns them on, not one
    // message and then the peer's next reservation mark (a long request between the two was
    // decided at once, unannounced).
    peers.peerHeard(origin, nowMillis);
  }

  @Override
  public void onPeerDecided(String origin, int promptTokens, long issuedMillis, long nowMillis) {
    intents.decided(origin, promptTokens, issuedMillis, nowMillis);
  }

  @Override
  public void onPeerHeard(String origin, long nowMillis) {
    peers.peerHeard(origin, nowMillis);
  }

  @Override
  public void onPeerReserved(
      String origin,
      int replica,
      int prefillTokens,
      int promptTokens,
      long issuedMillis,
      long nowMillis) {
    peers.peerDecided(origin, issuedMillis, nowMillis);
    learnTypical(prefillTokens);
    if (replica >= 0) { // -1: a replica not known here yet (the reservation is held detached)
      if (prefillTokens >= promptTokens) {
        families.started(replica, nowMillis); // a peer started a prefix there
        lastPeerStartMillis = nowMillis;
      }
      writes.add(replica, prefillTokens, nowMillis);
      progress.reserved(replica, issuedMillis);
      peerRecent.add(replica, prefillTokens, issuedMillis, nowMillis);
    }
  }
}

package io.kvrouter.tracker.policy;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.IntToDoubleFunction;

/**
 * kvrouter's policy ({@code kvrouter}): the replica that will return the request's first token
 * soonest, as predicted from the work queued ahead of it there and the part of its prompt the
 * replica has not cached ({@link CostModel}); busy replicas last; concurrent decisions on different
 * routers made to diverge; long requests held so the short ones of the same instant go first
 * ({@link Holds}). The timing model is fitted online from this router's observed first tokens
 * ({@link TimingFit}).
 *
 * <p>Many routers. Routers that decide within one propagation delay of each other cannot see each
 * other's reservations. Near-ties (within {@code ties.band}, {@code ties.relative} of the best, and
 * among several routers one typical request's compute, {@code ties.unseen-band}) are resolved by
 * {@link NearTies}: a request with a cached prefix somewhere goes to the near-tie at this router's
 * turn in an order every router shares; a request no candidate holds any of (a burst of unique
 * prompts) goes to the near-tie holding the fewest of this router's own requests, from this
 * router's own starting point, its ties found without the peers' reservations of the last {@code
 * ties.blind}, which some routers hold and others not yet. A lone router starts such a request on
 * the near-tie where it has lately started the fewest new prefixes ({@link PrefixFamilies}: the
 * prefix draws its follow-ups back), and in a burst of new prefixes on the fewest of all replicas
 * not busy. In strict mode ({@link RouteQuery#gated()}) the near-tie with the fewest requests in
 * flight.
 *
 * <p>Intents ({@code intents}). A router holds a request whose uncached prefill takes {@code
 * intents.from} or more one observed propagation delay and announces it to its peers as it arrives;
 * before deciding, a router places the peers' requests due before its own ({@link PeerIntents}) as
 * phantom prefill where each would cost least. Every router predicts with the timing model of the
 * router whose id sorts first ({@link SharedTimings}) and takes, for an announced request, the
 * near-tie {@link PeerIntents#choose} picks, so the placements of one request agree across routers
 * whose views differ slightly.
 *
 * <p>Lag ({@link ReplicaLag}): a replica whose first tokens have lately come later than predicted
 * is charged the excess, which the timing model cannot see (a replica out of sequence slots, a
 * slower GPU).
 *
 * <p>Cost: O(n · (phantoms + 1)) per decision over n candidates, plus the ranking's O(n log n). Not
 * thread-safe.
 */
final class KvRouterPolicy implements Policy, WatchesPeers, HoldsDecisions, SharesIntents {

  /** Weight of a new size in the running typical decision size. */
  private static final double TYPICAL_ALPHA = 0.05;

  /** Own requests awaiting their first token, kept for the fit; bounded against leaks. */
  private static final int MAX_PENDING = 1 << 16;

  private final String name;
  private final PolicySettings s;
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
  private final RecentWork recentWork;
  private final OwnInFlight ownLoad = new OwnInFlight();
  private final PrefixFamilies families;
  private final PeerRecent peerRecent = new PeerRecent();
  private final ReplicaLag lag;
  private final NearTies ties;
  private final PeerIntents intents = new PeerIntents();
  private final Situation situation;
  private final CostModel costs;
  private final Holds holds;
  private double lastOwnTokens;
  private double typicalTokens = 2048;
  private boolean typicalKnown;
  private final IntentPlacement placement;
  // When a lone router last decided a prompt no replica held any of.
  private long lastSoloColdMillis = Long.MIN_VALUE;

  KvRouterPolicy(PolicySettings settings, BusyThresholds busy) {
    this.name = settings.name();
    this.s = settings;
    this.fit = new TimingFit(EngineTiming.MOCKER, 0.5, s.timing().forgetting(), 3.0);
    this.families = new PrefixFamilies(Math.max(1, s.cold().familyHalfLifeMillis()));
    this.lag = new ReplicaLag(s.lag().fromMillis(), s.lag().halfLifeMillis(), s.lag().warmup());
    this.peers =
        new PeerConcurrency(
            s.peers().horizonMillis(), s.peers().rotationMillis(), s.peers().maxDelayMillis());
    this.ties = new NearTies(s.ties(), peers, writes);
    this.situation = new Situation(s, peers, intents, fit);
    this.recentWork = new RecentWork(s.cost().sessionExcessHalfLifeMillis());
    this.costs = new CostModel(s.cost(), busy, writes, recentWork, lag, peerRecent);
    this.holds = new Holds(s, peers, fit, situation, costs);
    this.placement = new IntentPlacement(s, intents, costs, ties);
  }

  @Override
  public String name() {
    return name;
  }

  /** The timing this policy predicts with now. */
  EngineTiming timing() {
    return fit.current();
  }

  @Override
  public int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load) {
    int n = candidates.length;
    long now = query.nowMillis();
    boolean intentsOn = situation.intentsOn(query);
    EngineTiming t = intentsOn ? placement.leader(fit.current(), now) : fit.current();
    double[] phantom = new double[n];
    // Under intents, the replicas' ids once: the placement and this decision's order both read
    // them.
    String[] ids = intentsOn ? IntentPlacement.ids(candidates, load) : null;
    double[] prefill =
        intentsOn
            ? placement.place(t, candidates, ids, load, now, phantom, query.blockSize())
            : null;
    double extraBand =
        s.ties().unseenBand() > 0 && situation.amongPeers(query)
            ? s.ties().unseenBand() * t.computeMillis(typicalTokens)
            : 0;
    CostModel.Priced p = costs.price(t, query, candidates, match, load, phantom, this::blindSince);
    double[] cost = p.cost();
    double[] own = p.own();
    boolean cold = p.cold();
    int bs = query.blockSize();
    boolean follows = holds.takeFollow(now) && !cold;
    if (follows) {
      int[] onHolder = leastThenCheapest(candidates, i -> own[i], bs, cost);
      if (onHolder != null) {
        return onHolder;
      }
    }
    if (intentsOn && situation.announced(IntentPlacement.least(own, n))) {
      return placement.rank(query, candidates, ids, cost, own, prefill, phantom);
    }
    if (!s.ties().spread()) {
      return Ranking.ascending(candidates, cost, Ranking.NO_RANDOMNESS);
    }
    if (query.gated() && s.ties().strictFirst()) {
      return ties.leastLoaded(
          candidates, cost, own, bs, load, now, extraBand, false, load::inFlight);
    }
    if (cold && situation.alone(query) && s.cold().soloByLoad()) {
      boolean burst = lastSoloColdMillis == now;
      lastSoloColdMillis = now;
      int[] fewest =
          burst && s.cold().soloBurstByFamilies() && s.cold().familyHalfLifeMillis() > 0
              ? leastThenCheapest(candidates, i -> families.on(candidates[i], now), 0, cost)
              : null;
      if (fewest != null) {
        return fewest;
      }
      return ties.leastLoaded(
          candidates, cost, own, bs, load, now, extraBand, true, soloLoad(load, now));
    }
    if (cold && holds.ledAt(now) && situation.amongPeers(query)) {
      // A cold lead that waited for the routers before it: the prefixes they started are in
      // view now, the near-ties found with their reservations, and the prefix goes where the
      // fewest were lately started by any router.
      return ties.leastLoaded(
          candidates, cost, own, bs, load, now, extraBand, false, r -> families.on(r, now));
    }
    if (peers.routers(now) <= 1 || !cold) {
      return ties.byTurn(candidates, cost, own, bs, load, now, extraBand);
    }
    return ties.byOwnLoad(candidates, cost, p.blind(), own, bs, load, now, extraBand, ownLoad::on);
  }

  /**
   * The candidates by cost, first among them of those not busy (a finite {@code cost}) the one with
   * the least {@code key} (a function of the candidate's index), of those within {@code slack} of
   * that least the cheapest; null if all are busy. A held cold lead's holder (the key its uncached
   * tokens, the slack a block), or a lone router's new prefix in a burst (the prefixes lately
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
   * Among several routers, ungated, for a prompt no candidate holds any of: peer reservations
   * decided after the returned time are left out of its near-ties ({@link PeerRecent}), those of
   * the last two observed propagation delays at least; {@code Long.MAX_VALUE} otherwise.
   */
  private long blindSince(RouteQuery query, long now) {
    if (!situation.amongPeers(query)) {
      return Long.MAX_VALUE;
    }
    return now
        - (long) Math.ceil(Math.max(s.ties().blindMillis(), 2 * situation.lateDelayMillis()));
  }

  /**
   * What a lone router's new prefix weighs the near-ties by: the prefixes it has lately started on
   * each, or with a family half-life of 0 the requests in flight there.
   */
  private IntToDoubleFunction soloLoad(LoadView load, long now) {
    return s.cold().familyHalfLifeMillis() > 0 ? r -> families.on(r, now) : load::inFlight;
  }

  @Override
  public boolean readsIntents() {
    return s.intents().enabled();
  }

  /**
   * Only a request whose uncached prefill takes {@code intents.from} or more is announced: a
   * shorter one held for another reason (a cold lead) would only show the peers phantom work that
   * it may never bring.
   */
  @Override
  public boolean announces(double leastUncached) {
    return s.intents().enabled() && situation.announced(leastUncached);
  }

  @Override
  public double uncachedTokens(RouteQuery query, MatchResult match, int replica) {
    return costs.ownTokens(query, match, replica);
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
  public void onPeerDecided(String origin, int promptTokens, long issuedMillis, long nowMillis) {
    intents.decided(origin, promptTokens, issuedMillis, nowMillis);
  }

  @Override
  public EngineTiming timingToShare() {
    return s.intents().enabled() ? fit.current() : null;
  }

  @Override
  public void onPeerTiming(String origin, EngineTiming timing, long nowMillis) {
    placement.peerTiming(origin, timing, nowMillis);
    // The peer is a live router too: intents need both, so one message turns them on.
    peers.peerHeard(origin, nowMillis);
  }

  // ------------------------------------------------------------------ holds

  @Override
  public boolean mayHold(RouteQuery query) {
    return holds.mayHold(query);
  }

  @Override
  public long holdMillis(RouteQuery query, int[] candidates, MatchResult match) {
    return holds.holdMillis(query, candidates, match);
  }

  @Override
  public long holdMoreMillis(
      RouteQuery query, int[] candidates, MatchResult match, long heldMillis) {
    return holds.holdMoreMillis(query, candidates, match, heldMillis);
  }

  // ------------------------------------------------------------------ feedback

  private void learnTypical(double tokens) {
    typicalTokens =
        typicalKnown ? (1 - TYPICAL_ALPHA) * typicalTokens + TYPICAL_ALPHA * tokens : tokens;
    typicalKnown = true;
  }

  @Override
  public void bindRouter(String routerId) {
    placement.bind(routerId);
    peers.bind(routerId);
  }

  /**
   * Learns the typical size of a decision and the write pressure from this router's own too, and
   * counts a prompt no replica held any of as a prefix started on {@code replica}.
   */
  @Override
  public void onRouted(RouteQuery query, MatchResult match, int replica) {
    double own = costs.ownTokens(query, match, replica);
    learnTypical(own);
    writes.add(replica, own, query.nowMillis());
    recentWork.add(replica, own, query.nowMillis());
    if (match.longest() == 0) {
      families.started(replica, query.nowMillis());
    }
    lastOwnTokens = own;
  }

  @Override
  public void onReserved(String requestId, RouteQuery query, int replica) {
    peers.ownDecided(query.nowMillis());
    ownLoad.reserved(requestId, replica);
    if (s.intents().enabled()) {
      placement.ownReserved(replica, lastOwnTokens, query.nowMillis());
    }
    double[] entry = costs.observation(replica, query.nowMillis());
    if (entry != null) {
      pending.put(requestId, entry);
    }
  }

  @Override
  public void onPrefillCompleted(String requestId, long nowMillis) {
    double[] p = pending.remove(requestId);
    if (p == null || nowMillis < 0) {
      return;
    }
    int replica = (int) p[EngineTiming.SIZE + 1];
    lag.observed(replica, nowMillis - p[EngineTiming.SIZE], p[EngineTiming.SIZE + 2], nowMillis);
    if (s.timing().fit()) {
      fit.observe(p, nowMillis - p[EngineTiming.SIZE]);
    }
  }

  @Override
  public void onReleased(String requestId, long nowMillis) {
    pending.remove(requestId);
    ownLoad.released(requestId);
  }

  @Override
  public double lagMillis(int replica, long nowMillis) {
    return lag.millis(replica, nowMillis);
  }

  @Override
  public void onReplicaRemoved(int replica) {
    ownLoad.forget(replica);
    peerRecent.forget(replica);
    placement.forget(replica);
    lag.forget(replica);
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
        holds.peerStarted(nowMillis);
      }
      writes.add(replica, prefillTokens, nowMillis);
      recentWork.add(replica, prefillTokens, nowMillis);
      peerRecent.add(replica, prefillTokens, issuedMillis, nowMillis);
    }
  }
}

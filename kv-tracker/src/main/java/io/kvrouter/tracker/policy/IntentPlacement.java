package io.kvrouter.tracker.policy;

import io.kvrouter.tracker.ledger.LoadView;

/**
 * The kvrouter policy's side of intents ({@code intents}): the timing model every router decides
 * with ({@link SharedTimings}), the peers' announced requests placed as phantom prefill before this
 * router's own decision ({@link PeerIntents#place}), and the near-tie an announced request takes,
 * which every router picks alike ({@link PeerIntents#choose}). This router's own recent
 * reservations are left out of the intents due before them (a peer's intent this router already
 * placed is not counted twice). Not thread-safe: owned by its policy.
 */
final class IntentPlacement {

  private final PolicySettings s;
  private final PeerIntents intents;
  private final CostModel costs;
  private final NearTies ties;
  private final PeerRecent ownRecent = new PeerRecent();
  private final SharedTimings sharedTimings = new SharedTimings();
  private double[] ownByReplica = new double[16];
  private String routerId = "";

  IntentPlacement(PolicySettings s, PeerIntents intents, CostModel costs, NearTies ties) {
    this.s = s;
    this.intents = intents;
    this.costs = costs;
    this.ties = ties;
  }

  /** The router this policy decides for. */
  void bind(String routerId) {
    this.routerId = routerId;
  }

  /** The timing model to decide with under intents: the leading router's, or {@code own}. */
  EngineTiming leader(EngineTiming own, long nowMillis) {
    return sharedTimings.leader(routerId, own, nowMillis);
  }

  /** Peer {@code origin}'s timing model arrived: it may lead, and intents are on. */
  void peerTiming(String origin, EngineTiming timing, long nowMillis) {
    sharedTimings.heard(origin, timing, nowMillis, s.peers().horizonMillis());
    intents.heard(nowMillis);
  }

  /** This router reserved {@code tokens} of prefill on {@code replica}. */
  void ownReserved(int replica, double tokens, long nowMillis) {
    ownRecent.add(replica, tokens, nowMillis, nowMillis);
  }

  /** The replica left. */
  void forget(int replica) {
    ownRecent.forget(replica);
  }

  /**
   * Places the peers' requests due before this decision as phantom prefill in {@code phantom};
   * returns each candidate's queued prefill.
   */
  double[] place(
      EngineTiming t,
      int[] candidates,
      String[] ids,
      LoadView load,
      long now,
      double[] phantom,
      int blockSize) {
    int n = candidates.length;
    double[] prefill = new double[n];
    for (int i = 0; i < n; i++) {
      prefill[i] = load.prefillTokens(candidates[i]);
    }
    intents.place(
        routerId,
        now,
        candidates,
        ids,
        prefill,
        phantom,
        since -> ownSince(candidates, since),
        (i, tokens, ahead) -> {
          int r = candidates[i];
          if (costs.busy(load, r)) {
            return Double.POSITIVE_INFINITY;
          }
          return costs.ttft(t, ahead, tokens, load, r)
              + s.cost().workWeight() * t.computeMillis(tokens);
        },
        this::band,
        blockSize);
    return prefill;
  }

  /**
   * The candidates by cost, the near-tie {@link PeerIntents#choose} picks first, as every router
   * picks it (its peers know this request by this router's id and its prompt size).
   */
  int[] rank(
      RouteQuery query,
      int[] candidates,
      String[] ids,
      double[] cost,
      double[] own,
      double[] prefill,
      double[] phantom) {
    int n = candidates.length;
    double[] ahead = new double[n];
    for (int i = 0; i < n; i++) {
      ahead[i] = prefill[i] + phantom[i];
    }
    long[] order = PeerIntents.order(routerId, query.promptTokens(), ids);
    int chosen = PeerIntents.choose(cost, own, ahead, order, this::band, query.blockSize());
    int[] ranked = Ranking.ascending(candidates, cost, Ranking.NO_RANDOMNESS);
    return chosen < 0 ? ranked : Ranking.withFirst(ranked, candidates[chosen]);
  }

  /** The least of the first {@code n} of {@code own}. */
  static double least(double[] own, int n) {
    double least = Double.POSITIVE_INFINITY;
    for (int i = 0; i < n; i++) {
      least = Math.min(least, own[i]);
    }
    return least;
  }

  /** The replica ids of {@code candidates}, which every router names alike. */
  static String[] ids(int[] candidates, LoadView load) {
    String[] ids = new String[candidates.length];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = load.id(candidates[i]);
    }
    return ids;
  }

  /** This router's own prefill reserved on each of {@code candidates} at or after a time. */
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
  private double band(double best) {
    return ties.band(best, 0);
  }
}

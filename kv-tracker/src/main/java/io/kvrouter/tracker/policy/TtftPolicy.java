package io.kvrouter.tracker.policy;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;
import java.util.LinkedHashMap;
import java.util.Map;
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
 *   own_r    = max(1, promptTokens − bs · (gpu + 0.9·predicted + 0.75·cpu + 0.25·disk blocks))
 *   ahead_r  = prefill tokens reserved on r and not yet prefilled (every router's reservations)
 *            + unseen_r (below)
 *   ttft_r   = timing.ttftMillis(ahead_r, own_r, chunk − running_r, decoding_r, kvUsage_r)
 * </pre>
 *
 * with {@code timing} an {@link EngineTiming} fitted online ({@link TimingFit}) from this router's
 * observed first tokens. With nothing queued anywhere the smallest {@code own_r} wins, i.e. the
 * longest cached prefix: the policy is exactly cache-greedy at light load and spreads under load,
 * by as much as the queue ahead costs in time, not in a tuned weight.
 *
 * <p>Many routers. Routers that decide within one propagation delay of each other cannot see each
 * other's reservations. Under {@code concurrency = unseen} (the default) this router learns from
 * the reservation plane how many such unseen peer decisions to expect ({@link PeerConcurrency}),
 * takes its turn among the active routers (rotating, distinct for routers deciding together), and
 * before scoring places the peer decisions due before its turn as phantom requests of the recent
 * typical size, each on the replica with the lowest predicted TTFT for it. Near-ties (within {@code
 * max(tieMillis, tieRelative · best)}) go to the candidate at the router's turn in an order every
 * router shares (by a hash of the replica id), so routers on the same view pick different replicas.
 * {@code turns} keeps the near-tie rule without phantoms, {@code random} draws near-ties at random,
 * {@code off} takes the first of equal candidates.
 *
 * <p>Cost: O(n · (phantoms + 1)) per decision over n candidates, plus the ranking's O(n log n).
 */
final class TtftPolicy implements Policy, PolicyFeedback {

  private static final double PHANTOM_ALPHA = 0.05;
  private static final long WRITE_HALF_LIFE_MILLIS = Long.getLong("lab.halflife", 60_000);
  private static final boolean PROMPT_PRESSURE =
      "prompt".equals(System.getProperty("lab.pressure"));
  private static final String BUDGET_MODE = System.getProperty("lab.budget", "0");
  private static final double LANE_SCALE = Double.parseDouble(System.getProperty("lab.lanescale", "1"));
  private static final double LANE_OWN = Double.parseDouble(System.getProperty("lab.laneown", "0.1"));
  private static final boolean PERM = Boolean.getBoolean("lab.perm");
  private LoadView lastLoad;
  private static final double DEFER_MIN_UNSEEN = Double.parseDouble(System.getProperty("lab.deferminunseen", "0.5"));
  private double[] lastCost = new double[0];
  private double[] lastOwn = new double[0];
  private static final int STAGGER = Integer.getInteger("lab.stagger", 0);
  private static final boolean DEBUG = Boolean.getBoolean("lab.debug");
  private static final double BUDGET_Q =
      Double.parseDouble(System.getProperty("lab.budgetq", "0.5"));
  private double typicalTtft = 100;
  private static final double BETA = Double.parseDouble(System.getProperty("lab.beta", "0"));
  private static final double BAND = Double.parseDouble(System.getProperty("lab.band", "0.02"));
  private static final double BANDMS = Double.parseDouble(System.getProperty("lab.bandms", "2"));

  private final PolicyConfig config;
  private final KvRouterConfig k;
  private final RandomGenerator random;
  private final TimingFit fit;
  private final PeerConcurrency peers;
  private final Map<String, double[]> pending =
      new LinkedHashMap<>(64, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, double[]> eldest) {
          return size() > 1 << 16;
        }
      };
  private double[] writes = new double[16];
  private long[] writesAt = new long[16];
  private double typicalTokens = 2048;
  private boolean typicalKnown;
  // Scratch of the last rank(), indexed like its candidates.
  private int[] lastCandidates = new int[0];
  private double[][] lastFeatures = new double[0][];

  TtftPolicy(PolicyConfig config, RandomGenerator random) {
    this.config = config;
    this.k = config.kvrouter();
    this.random = random;
    this.fit = new TimingFit(EngineTiming.MOCKER, 0.5, k.fitForgetting(), 3.0);
    this.peers = new PeerConcurrency(k.horizonMillis(), k.rotationMillis(), k.maxDelayMillis());
  }

  @Override
  public String name() {
    return "kvrouter";
  }

  /** The timing this policy predicts with now. */
  EngineTiming timing() {
    return fit.current();
  }

  /** Uncached prompt tokens of {@code replica}: at least one, as an engine always computes one. */
  double ownTokens(RouteQuery query, MatchResult match, int replica) {
    double cached = config.cachedBlocks(match, replica) * query.blockSize();
    return Math.max(1, query.promptTokens() - cached);
  }

  private double chunk(LoadView load, int replica) {
    return Math.max(k.chunkTokens() / 2.0, k.chunkTokens() - load.running(replica));
  }

  private static boolean decoding(LoadView load, int replica) {
    return load.decodeTokens(replica) > 0 || load.running(replica) > 0;
  }

  double ttft(EngineTiming t, double ahead, double own, LoadView load, int replica) {
    return t.ttftMillis(
        ahead, own, chunk(load, replica), decoding(load, replica), load.kvUsage(replica));
  }

  @Override
  public int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load) {
    int n = candidates.length;
    EngineTiming t = fit.current();
    long now = query.nowMillis();
    double[] unseen = unseenLoad(t, candidates, load, now);
    double[] cost = new double[n];
    double[] owns = new double[n];
    boolean anyFree = false;
    if (lastFeatures.length < n) {
      lastFeatures = new double[n][EngineTiming.SIZE];
    }
    for (int i = 0; i < n; i++) {
      int r = candidates[i];
      double ahead = load.prefillTokens(r) + unseen[i];
      double own = ownTokens(query, match, r);
      owns[i] = own;
      cost[i] =
          Math.max(budget(), ttft(t, ahead, own, load, r))
              + BETA * t.ttftMillis(0, own, k.chunkTokens(), false, 0);
      EngineTiming.features(
          ahead + own, chunk(load, r), decoding(load, r), load.kvUsage(r), lastFeatures[i]);
      anyFree |= !config.busy(load, r);
    }
    lastCandidates = candidates;
    lastLoad = load;
    lastCost = cost;
    lastOwn = owns;
    double[] sortKey = cost.clone();
    if (anyFree) {
      for (int i = 0; i < n; i++) {
        if (config.busy(load, candidates[i])) {
          sortKey[i] = Double.POSITIVE_INFINITY;
        }
      }
    }
    return switch (k.concurrency()) {
      case "off" -> Ranking.ascending(candidates, sortKey, Ranking.NO_RANDOMNESS);
      case "random" -> nearTieAtRandom(candidates, sortKey);
      case "lanes" -> lanes(candidates, sortKey, owns, t, now);
      default -> nearTieByTurn(candidates, sortKey, load, now);
    };
  }

  /**
   * Candidates by cost; of those within the concurrency band of the best (the time a typical
   * concurrent request would add), the one at this router's turn, counting from the best.
   */
  private int[] lanes(int[] candidates, double[] sortKey, double[] owns, EngineTiming t, long now) {
    int[] ranked = Ranking.ascending(candidates, sortKey, Ranking.NO_RANDOMNESS);
    double best = min(sortKey);
    int bestAt = 0;
    for (int i = 1; i < sortKey.length; i++) {
      if (sortKey[i] < sortKey[bestAt]) {
        bestAt = i;
      }
    }
    double fewest = owns[bestAt];
    if (LANE_OWN > 0) {
      sortKey = sortKey.clone();
      for (int i = 0; i < sortKey.length; i++) {
        if (owns[i] > fewest * (1 + LANE_OWN) + 64) {
          sortKey[i] = Double.POSITIVE_INFINITY; // moving there would give up cached tokens
        }
      }
      ranked = Ranking.ascending(candidates, sortKey, Ranking.NO_RANDOMNESS);
      best = min(sortKey);
    }
    double unseen =
        deferredNow && STAGGER >= peers.routers(now) ? 0 : peers.expectedUnseen(now);
    double b =
        band(best)
            + Math.min(1, unseen) * LANE_SCALE * t.ttftMillis(0, typicalTokens, k.chunkTokens(), false, 0);
    int count = 0;
    for (double c : sortKey) {
      if (c <= best + b) {
        count++;
      }
    }
    if (count <= 1) {
      return ranked;
    }
    int turn = peers.turn(now);
    if (!PERM) {
      return Ranking.withFirst(ranked, ranked[turn % count]);
    }
    // The tied candidates in a permutation every router shares (by replica id and time window),
    // cyclically from this router's turn.
    long window = Math.floorDiv(now, k.rotationMillis());
    int[] ties = java.util.Arrays.copyOf(ranked, count);
    long[] keys = new long[count];
    for (int i = 0; i < count; i++) {
      keys[i] = mix(lastLoad.id(ties[i]) + "#" + window);
    }
    int routers = peers.routers(now);
    int n = candidates.length;
    // positions of all candidates in the shared permutation
    long[] all = new long[n];
    for (int i = 0; i < n; i++) {
      all[i] = mix(lastLoad.id(candidates[i]) + "#" + window);
    }
    long[] sorted = all.clone();
    java.util.Arrays.sort(sorted);
    int bestTie = -1;
    int bestDist = Integer.MAX_VALUE;
    int start = turn % n;
    for (int i = 0; i < count; i++) {
      int pos = java.util.Arrays.binarySearch(sorted, keys[i]);
      int dist = Math.floorMod(pos - start, n);
      if (dist < bestDist) {
        bestDist = dist;
        bestTie = ties[i];
      }
    }
    return Ranking.withFirst(ranked, bestTie);
  }

  private double budget() {
    return BUDGET_MODE.equals("q") ? typicalTtft : Double.parseDouble(BUDGET_MODE);
  }

  private double band(double best) {
    return Math.max(BANDMS, BAND * best);
  }

  private int[] nearTieAtRandom(int[] candidates, double[] sortKey) {
    int[] ranked = Ranking.ascending(candidates, sortKey, random);
    double best = min(sortKey);
    int count = 0;
    for (double c : sortKey) {
      if (c <= best + band(best)) {
        count++;
      }
    }
    if (count <= 1) {
      return ranked;
    }
    int pick = random.nextInt(count);
    return Ranking.withFirst(ranked, ranked[pick]);
  }

  /**
   * Candidates by cost; of the near-ties, the first is the one at this router's turn in the order
   * of replica-id hashes (the same order on every router).
   */
  private int[] nearTieByTurn(int[] candidates, double[] sortKey, LoadView load, long now) {
    int[] ranked = Ranking.ascending(candidates, sortKey, Ranking.NO_RANDOMNESS);
    double best = min(sortKey);
    int n = candidates.length;
    int count = 0;
    for (double c : sortKey) {
      if (c <= best + band(best)) {
        count++;
      }
    }
    if (count <= 1) {
      return ranked;
    }
    long[] keyed = new long[count];
    int[] ties = new int[count];
    for (int i = 0, j = 0; i < n; i++) {
      if (sortKey[i] <= best + band(best)) {
        ties[j] = candidates[i];
        keyed[j] =
            (long) writePressure(candidates[i], now) * 1024 + (mix(load.id(candidates[i])) & 1023);
        j++;
      }
    }
    // Order the ties by their shared key (insertion sort: a handful of entries).
    for (int a = 1; a < count; a++) {
      for (int b = a; b > 0 && keyed[b] < keyed[b - 1]; b--) {
        long kk = keyed[b];
        keyed[b] = keyed[b - 1];
        keyed[b - 1] = kk;
        int tt = ties[b];
        ties[b] = ties[b - 1];
        ties[b - 1] = tt;
      }
    }
    int turn = peers.turn(now);
    return Ranking.withFirst(ranked, ties[turn % count]);
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
    double expected = peers.expectedUnseen(now);
    double ahead = expected * peers.turn(now) / (routers - 1);
    if (DEBUG) {
      System.err.printf("t=%d routers=%d turn=%d E=%.2f ahead=%.2f typ=%.0f delay=%.1f%n", now, routers, peers.turn(now), expected, ahead, typicalTokens, peers.delayMillis());
    }
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

  private static double min(double[] values) {
    double best = Double.POSITIVE_INFINITY;
    for (double c : values) {
      best = Math.min(best, c);
    }
    return best;
  }

  private static long mix(String id) {
    long z = (id == null ? 0 : id.hashCode()) * 0xC2B2AE3D27D4EB4FL;
    z = (z ^ (z >>> 29)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 32);
  }

  /** Uncached tokens recently written to {@code replica}, decayed with a half-life. */
  double writePressure(int replica, long now) {
    if (replica >= writes.length) {
      return 0;
    }
    return writes[replica] * decay(now - writesAt[replica]);
  }

  private static double decay(long elapsedMillis) {
    return Math.pow(0.5, Math.max(0, elapsedMillis) / (double) WRITE_HALF_LIFE_MILLIS);
  }

  private void wrote(int replica, double tokens, long now) {
    if (replica >= writes.length) {
      int n = Math.max(replica + 1, writes.length * 2);
      writes = java.util.Arrays.copyOf(writes, n);
      writesAt = java.util.Arrays.copyOf(writesAt, n);
    }
    writes[replica] = writePressure(replica, now) + tokens;
    writesAt[replica] = now;
  }

  private void learnTypical(double tokens) {
    typicalTokens =
        typicalKnown ? (1 - PHANTOM_ALPHA) * typicalTokens + PHANTOM_ALPHA * tokens : tokens;
    typicalKnown = true;
  }

  // ------------------------------------------------------------------ feedback

  private static final double DEFER_FACTOR = Double.parseDouble(System.getProperty("lab.deferfactor", "20"));
  private static final double DEFER_OWN = Double.parseDouble(System.getProperty("lab.deferown", "0.5"));

  private boolean deferredNow;

  @Override
  public void experimentDeferred(boolean deferred) {
    deferredNow = deferred && Boolean.getBoolean("lab.defer") && Boolean.getBoolean("lab.deferplain");
  }

  @Override
  public long deferMillis(RouteQuery query, int chosen, long nowMillis) {
    if (peers.routers(nowMillis) <= 1 || peers.expectedUnseen(nowMillis) < DEFER_MIN_UNSEEN) {
      return 0;
    }
    double d = peers.delayMillis();
    if (d <= 0) {
      return 0;
    }
    int at = -1;
    for (int i = 0; i < lastCandidates.length; i++) {
      if (lastCandidates[i] == chosen) {
        at = i;
      }
    }
    if (at < 0 || lastCost[at] < DEFER_FACTOR * d) {
      return 0;
    }
    // flexible: its uncached part on the chosen replica is most of the prompt
    if (lastOwn[at] < DEFER_OWN * query.promptTokens()) {
      return 0;
    }
    int stagger = STAGGER <= 0 ? 0 : peers.turn(nowMillis) % STAGGER;
    return (long) ((Math.ceil(d) + 1) * (1 + stagger));
  }

  @Override
  public void bind(String selfId) {
    peers.bind(selfId);
  }

  @Override
  public void placed(String requestId, RouteQuery query, int replica) {
    peers.ownDecided(query.nowMillis());
    for (int i = 0; i < lastCandidates.length; i++) {
      if (lastCandidates[i] == replica) {
        double[] phi = lastFeatures[i].clone();
        pending.put(requestId, new double[] {phi[0], phi[1], phi[2], phi[3], query.nowMillis()});
        break;
      }
    }
  }

  @Override
  public void firstToken(String requestId, long nowMillis) {
    double[] p = pending.remove(requestId);
    if (p == null) {
      return;
    }
    double observed = nowMillis - p[EngineTiming.SIZE];
    if (k.fitTiming()) {
      fit.observe(p, observed);
    }
    // Robbins-Monro quantile tracking, multiplicative so it is scale-free.
    typicalTtft *= Math.exp(0.02 * (observed > typicalTtft ? BUDGET_Q : BUDGET_Q - 1));
  }

  @Override
  public void ended(String requestId) {
    pending.remove(requestId);
  }

  @Override
  public void peerPlaced(
      String origin,
      int replica,
      int prefillTokens,
      int promptTokensOfPeer,
      long issuedMillis,
      long nowMillis) {
    peers.peerDecided(origin, issuedMillis, nowMillis);
    learnTypical(prefillTokens);
    wrote(replica, PROMPT_PRESSURE ? promptTokensOfPeer : prefillTokens, nowMillis);
  }

  /** Learns the typical size of a decision from this router's own too. */
  @Override
  public void onRouted(RouteQuery query, MatchResult match, int replica) {
    learnTypical(ownTokens(query, match, replica));
    wrote(
        replica,
        PROMPT_PRESSURE ? query.promptTokens() : ownTokens(query, match, replica),
        query.nowMillis());
  }
}

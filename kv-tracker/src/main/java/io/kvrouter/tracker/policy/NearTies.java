package io.kvrouter.tracker.policy;

import io.kvrouter.tracker.ledger.LoadView;
import java.util.Arrays;
import java.util.function.IntToDoubleFunction;
import java.util.function.IntUnaryOperator;

/**
 * How {@link KvRouterPolicy} resolves near-ties: candidates whose predicted TTFT lies within a band
 * of the best and that give up no more than one cached block. Routers deciding at once on the same
 * view would all take the same best replica; resolving near-ties differently per router, in an
 * order every router shares, makes their decisions diverge. Three ways: by this router's turn, by
 * this router's own load from its own starting point, or (strict mode, where every decision sees
 * the earlier ones, and a lone router's new prefix) the least loaded.
 *
 * <p>The band: at least {@code ties.band} and {@code ties.relative} of the best, and at least the
 * caller's {@code extraBand} (one typical request's compute among several routers, {@code
 * ties.unseen-band}).
 *
 * <p>Not thread-safe: owned by its policy, like the state it reads.
 */
final class NearTies {

  private final PolicySettings.Ties settings;
  private final PeerConcurrency peers;
  private final WritePressure writes;

  NearTies(PolicySettings.Ties settings, PeerConcurrency peers, WritePressure writes) {
    this.settings = settings;
    this.peers = peers;
    this.writes = writes;
  }

  /** The near-tie band above the best cost {@code best}, ms: at least {@code extraBand}. */
  double band(double best, double extraBand) {
    return Math.max(Math.max(settings.bandMillis(), settings.relative() * best), extraBand);
  }

  /**
   * Marks the near-ties of the best candidate: cost within the band, and no more than one block
   * less cached than the best (a turn never gives up cached tokens). Returns how many.
   */
  private int nearTies(
      double[] cost, double[] own, int blockSize, double extraBand, boolean[] out) {
    int bestAt = 0;
    for (int i = 1; i < out.length; i++) {
      if (cost[i] < cost[bestAt]) {
        bestAt = i;
      }
    }
    double best = cost[bestAt];
    int count = 0;
    for (int i = 0; i < out.length; i++) {
      out[i] = cost[i] <= best + band(best, extraBand) && own[i] <= own[bestAt] + blockSize;
      count += out[i] ? 1 : 0;
    }
    return count;
  }

  /**
   * Candidates by cost; of the near-ties, the first is the one at this router's turn in an order
   * every router shares ({@link #tieKey}), so routers on the same view pick different replicas.
   */
  int[] byTurn(
      int[] candidates,
      double[] cost,
      double[] own,
      int blockSize,
      LoadView load,
      long now,
      double extraBand) {
    int[] ranked = Ranking.ascending(candidates, cost, Ranking.NO_RANDOMNESS);
    boolean[] tie = new boolean[candidates.length];
    int count = nearTies(cost, own, blockSize, extraBand, tie);
    if (count <= 1) {
      return ranked;
    }
    int[] ties = sortedTies(candidates, tie, count, load, now);
    return Ranking.withFirst(ranked, ties[(int) (peers.turn(now) % count)]);
  }

  /**
   * Candidates by cost; of the near-ties on {@code tieCost}, the one holding the fewest of this
   * router's own requests in flight ({@code ownInFlight}), equals in the hash order of all the
   * candidates rotated to start at this router's share of it ({@code rank · candidates ÷ routers},
   * {@link PeerConcurrency#rank}). Each router spreads its own load evenly, and routers walk the
   * replicas from different starting points, so decisions taken blind of each other (4 routers, 6
   * each, 8 tied replicas) land 3 per replica whatever their timing. {@code tieCost} is the cost
   * without the peers' recent reservations ({@link PeerRecent}): ties found on each router's
   * partial view of those would differ between routers and break the pattern. Positions count all
   * candidates, not only the ties, so a router's starting point does not move as its ties change.
   */
  int[] byOwnLoad(
      int[] candidates,
      double[] cost,
      double[] tieCost,
      double[] own,
      int blockSize,
      LoadView load,
      long now,
      double extraBand,
      IntUnaryOperator ownInFlight) {
    int[] ranked = Ranking.ascending(candidates, cost, Ranking.NO_RANDOMNESS);
    boolean[] tie = new boolean[candidates.length];
    int count = nearTies(tieCost, own, blockSize, extraBand, tie);
    if (count <= 1) {
      return ranked;
    }
    // Every candidate's place in the replicas' hash order: the same for every router, whichever of
    // them are near-ties for this one right now.
    int n = candidates.length;
    long[] hash = new long[n];
    for (int i = 0; i < n; i++) {
      hash[i] = mix(load.id(candidates[i]));
    }
    long[] sorted = hash.clone();
    Arrays.sort(sorted);
    int routers = peers.routers(now);
    long rank = peers.rank(now);
    int start = routers > 1 ? (int) (rank * n / routers) : (int) Math.floorMod(rank, n);
    int best = -1;
    long bestKey = Long.MAX_VALUE;
    for (int i = 0; i < n; i++) {
      if (!tie[i]) {
        continue;
      }
      // Ids are distinct, so their hashes are too but by a 2^-64 chance (equals share a place).
      int position = Arrays.binarySearch(sorted, hash[i]);
      long key =
          ((long) Math.max(0, ownInFlight.applyAsInt(candidates[i])) << 32)
              | Math.floorMod(position - start, n);
      if (key < bestKey) {
        bestKey = key;
        best = candidates[i];
      }
    }
    return Ranking.withFirst(ranked, best);
  }

  /**
   * Of the near-ties only those with the least {@code loadOf}; of them the first in the shared
   * order ({@link #tieKey}: fewest tokens recently written, then the id's hash), or with {@code
   * byTurn} the one at this router's turn in it, as under {@link #byTurn}.
   *
   * <p>Strict mode, {@code loadOf} the requests in flight: a gate admits the decision only if the
   * replica holds no more requests than this router saw there, so decisions on a replica are
   * serialised and each sees the earlier ones. Nothing to diverge from: the least loaded of equal
   * candidates, the first. A lone router's prompt that nothing holds ({@link KvRouterPolicy}),
   * {@code loadOf} the prefixes lately started there or the requests in flight: by turn, so that
   * routers that have not heard of each other yet still differ.
   */
  int[] leastLoaded(
      int[] candidates,
      double[] cost,
      double[] own,
      int blockSize,
      LoadView load,
      long now,
      double extraBand,
      boolean byTurn,
      IntToDoubleFunction loadOf) {
    int[] ranked = Ranking.ascending(candidates, cost, Ranking.NO_RANDOMNESS);
    boolean[] tie = new boolean[candidates.length];
    int count = nearTies(cost, own, blockSize, extraBand, tie);
    if (count <= 1) {
      return ranked;
    }
    // Each tie's load read once: a faded count costs a power of two.
    double[] loads = new double[candidates.length];
    double least = Double.POSITIVE_INFINITY;
    for (int i = 0; i < candidates.length; i++) {
      if (tie[i]) {
        loads[i] = loadOf.applyAsDouble(candidates[i]);
        least = Math.min(least, loads[i]);
      }
    }
    for (int i = 0; i < candidates.length; i++) {
      if (tie[i] && loads[i] > least) {
        tie[i] = false;
        count--;
      }
    }
    int[] ties = sortedTies(candidates, tie, count, load, now);
    return Ranking.withFirst(ranked, ties[byTurn ? (int) (peers.turn(now) % count) : 0]);
  }

  /** The {@code count} near-ties marked in {@code tie}, by {@link #tieKey} ascending. */
  private int[] sortedTies(int[] candidates, boolean[] tie, int count, LoadView load, long now) {
    long[] keyed = new long[count];
    int[] ties = new int[count];
    for (int i = 0, j = 0; i < candidates.length; i++) {
      if (tie[i]) {
        ties[j] = candidates[i];
        keyed[j] = tieKey(candidates[i], load, now);
        j++;
      }
    }
    // Insertion sort by the shared key: a handful of entries.
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
    return ties;
  }

  /**
   * The order of near-ties every router shares: fewest tokens recently written, then a hash of the
   * replica id.
   */
  private long tieKey(int replica, LoadView load, long now) {
    double written = writes.at(replica, now);
    long w = Math.min((1L << 30) - 1, Math.max(0, (long) written));
    return (w << 10) | (mix(load.id(replica)) & 1023);
  }

  private static long mix(String id) {
    return mix(0, id);
  }

  /** A well-spread hash of replica {@code id}, different for each {@code seed}. */
  static long mix(long seed, String id) {
    long z = (seed ^ (id == null ? 0 : id.hashCode())) * 0xC2B2AE3D27D4EB4FL;
    z = (z ^ (z >>> 29)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 32);
  }
}

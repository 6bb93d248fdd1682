package io.kvrouter.tracker.policy;

import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeSet;

/**
 * The requests peer routers announced and have not decided yet, as this router sees them: each with
 * the time its router will decide it and its uncached tokens on each candidate (this router's own
 * prefix match). Before deciding a request of its own, a router places the peers' requests due
 * before it, in an order every router shares (decision time, router id, request id), each where it
 * costs least, so that the requests of one instant are decided as one router would decide them.
 *
 * <p>An intent leaves when its reservation arrives ({@link #decided}), or {@link #STALE_MILLIS}
 * after its decision time (its router failed, or the request ended without a decision). A
 * reservation that overtakes its intent is remembered for as long, so the late intent is not kept.
 * Plain Java; not thread-safe.
 *
 * <p>Cost: O(log m) per intent added or decided; O(m · n · c) per placement over m intents due, n
 * candidates and c candidates per intent.
 */
final class PeerIntents {

  /** An intent undecided this long after its decision time is dropped. */
  static final long STALE_MILLIS = 1000;

  /** Intents kept at most, and reservations remembered ahead of their intents. */
  static final int CAPACITY = 4096;

  /** The cost of placing {@code tokens} uncached tokens on candidate {@code i} now. */
  interface Cost {
    double of(int i, double tokens);
  }

  private record Intent(
      String origin, String id, long decideAt, int[] replicas, double[] own, String key) {}

  private final TreeSet<Intent> order =
      new TreeSet<>(
          Comparator.comparingLong(Intent::decideAt)
              .thenComparing(Intent::origin)
              .thenComparing(Intent::id));
  private final Map<String, Intent> byKey = new HashMap<>();
  // Reservations that arrived before their intent, by key, with their arrival time.
  private final LinkedHashMap<String, Long> early = new LinkedHashMap<>();
  private long lastHeard = Long.MIN_VALUE;

  /**
   * Peer {@code origin} will decide {@code id} at {@code decideAt}; {@code own[j]} uncached tokens
   * on {@code replicas[j]}.
   */
  void add(String origin, String id, long decideAt, int[] replicas, double[] own, long nowMillis) {
    lastHeard = Math.max(lastHeard, nowMillis);
    prune(nowMillis);
    String key = key(origin, id);
    if (early.remove(key) != null || byKey.containsKey(key) || byKey.size() >= CAPACITY) {
      return;
    }
    Intent intent = new Intent(origin, id, decideAt, replicas.clone(), own.clone(), key);
    order.add(intent);
    byKey.put(key, intent);
  }

  /** The reservation of {@code origin}'s request {@code id} arrived at {@code nowMillis}. */
  void decided(String origin, String id, long nowMillis) {
    prune(nowMillis);
    String key = key(origin, id);
    Intent intent = byKey.remove(key);
    if (intent != null) {
      order.remove(intent);
    } else if (early.size() < CAPACITY) {
      early.put(key, nowMillis);
    }
  }

  /** Whether a peer announced an intent at or after {@code sinceMillis}. */
  boolean heardSince(long sinceMillis) {
    return lastHeard >= sinceMillis;
  }

  /** Reservations remembered now that arrived before their intents. */
  int remembered() {
    return early.size();
  }

  /** Intents kept now. */
  int size() {
    return byKey.size();
  }

  /**
   * Places the intents due before router {@code self}'s decision at {@code nowMillis} (earlier, or
   * at the same time from a router whose id sorts first), in order: each adds its uncached tokens
   * to {@code phantom} at the candidate {@link #choose} picks, the cost of each candidate and the
   * work queued there ({@code queued} plus the phantoms so far) seen after the phantoms placed
   * before it.
   */
  void place(
      String self,
      long nowMillis,
      int[] candidates,
      double[] queued,
      double[] phantom,
      Cost cost,
      Band band,
      int blockSize) {
    prune(nowMillis);
    int n = candidates.length;
    double[] costs = new double[n];
    double[] ahead = new double[n];
    double[] tokens = new double[n];
    for (Intent intent : order) {
      if (intent.decideAt() > nowMillis
          || intent.decideAt() == nowMillis && intent.origin().compareTo(self) >= 0) {
        return;
      }
      for (int i = 0; i < n; i++) {
        tokens[i] = tokensOn(intent, candidates[i]);
        costs[i] = tokens[i] < 0 ? Double.POSITIVE_INFINITY : cost.of(i, tokens[i]);
      }
      for (int i = 0; i < n; i++) {
        ahead[i] = queued[i] + phantom[i];
      }
      int best = choose(costs, tokens, ahead, band, blockSize);
      if (best >= 0) {
        phantom[best] += tokens[best];
      }
    }
  }

  /** The width of the near-tie band above a best cost. */
  interface Band {
    double above(double best);
  }

  /**
   * The choice every router makes alike: of the candidates whose cost lies within {@code band} of
   * the least and whose uncached tokens ({@code own}) exceed the least-cost one's by at most one
   * block (a near-tie never gives up a cached block), the one with the least {@code queued} work,
   * the first among equals; -1 when every cost is infinite. The band keeps two routers whose timing
   * fits differ a little on the same choice.
   */
  static int choose(double[] cost, double[] own, double[] queued, Band band, int blockSize) {
    int least = -1;
    for (int i = 0; i < cost.length; i++) {
      if (cost[i] < Double.POSITIVE_INFINITY && (least < 0 || cost[i] < cost[least])) {
        least = i;
      }
    }
    if (least < 0) {
      return -1;
    }
    double limit = cost[least] + band.above(cost[least]);
    double ownLimit = own[least] + blockSize;
    int best = least;
    for (int i = 0; i < cost.length; i++) {
      if (cost[i] <= limit && own[i] <= ownLimit && queued[i] < queued[best]) {
        best = i;
      }
    }
    return best;
  }

  private static String key(String origin, String id) {
    return origin + '\u0000' + id;
  }

  /** The intent's uncached tokens on {@code replica}, or -1 when it is not its candidate. */
  private static double tokensOn(Intent intent, int replica) {
    for (int j = 0; j < intent.replicas().length; j++) {
      if (intent.replicas()[j] == replica) {
        return intent.own()[j];
      }
    }
    return -1;
  }

  private void prune(long nowMillis) {
    Iterator<Intent> it = order.iterator();
    while (it.hasNext()) {
      Intent intent = it.next();
      if (intent.decideAt() >= nowMillis - STALE_MILLIS) {
        break;
      }
      it.remove();
      byKey.remove(intent.key());
    }
    Iterator<Long> arrived = early.values().iterator();
    while (arrived.hasNext() && arrived.next() < nowMillis - STALE_MILLIS) {
      arrived.remove();
    }
  }
}

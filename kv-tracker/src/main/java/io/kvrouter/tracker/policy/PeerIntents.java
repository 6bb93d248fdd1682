package io.kvrouter.tracker.policy;

import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeSet;

/**
 * The requests peer routers announced and have not decided yet, as this router sees them: each with
 * the time its router will decide it and its uncached tokens on each candidate (as its router saw
 * them). Before deciding a request of its own, a router places the peers' requests due before it,
 * in an order every router shares (decision time, router id, then the order the router announced
 * them in), each where it costs least, so that the requests of one instant are decided as one
 * router would decide them.
 *
 * <p>An intent leaves when its reservation arrives ({@link #decided}), or {@link #STALE_MILLIS}
 * after its decision time (its router failed, or the request ended without a decision). A
 * reservation names no intent (the compact wire carries no request id), so it ends the earliest
 * intent of its router with its prompt size whose decision time lies within {@link #MATCH_MILLIS}
 * before the reservation's issue time (a held decision is taken when its timer fires, a little late
 * under load, never early; {@link #CLOCK_SLACK_MILLIS} allows for rounding). A reservation that
 * overtakes its intent is remembered for as long, so the late intent is not kept. Plain Java; not
 * thread-safe.
 *
 * <p>Cost: O(log m) per intent added or decided; O(m · n · c) per placement over m intents due, n
 * candidates and c candidates per intent, plus one {@link OwnSince} lookup per distinct decision
 * time among them.
 */
final class PeerIntents {

  /** An intent undecided this long after its decision time is dropped. */
  static final long STALE_MILLIS = 1000;

  /** How long after its decision time a reservation may be issued and still end an intent. */
  static final long MATCH_MILLIS = 50;

  /** How long before its decision time a reservation may be issued and still end it. */
  static final long CLOCK_SLACK_MILLIS = 1;

  /** Intents kept at most, and reservations remembered ahead of their intents. */
  static final int CAPACITY = 4096;

  /**
   * The cost of placing {@code tokens} uncached tokens on candidate {@code i} now, behind {@code
   * ahead} tokens of queued prefill.
   */
  interface Cost {
    double of(int i, double tokens, double ahead);
  }

  /**
   * This router's own prefill reserved on each candidate at or after {@code fromMillis}: decisions
   * it took after the intents due then, which their routers could not foresee.
   */
  interface OwnSince {
    double[] since(long fromMillis);
  }

  private record Intent(
      String origin, long decideAt, long n, int promptTokens, int[] replicas, double[] own) {}

  /** A reservation that arrived before any intent it could end. */
  private record Early(String key, long issued, long arrived) {}

  private final TreeSet<Intent> order =
      new TreeSet<>(
          Comparator.comparingLong(Intent::decideAt)
              .thenComparing(Intent::origin)
              .thenComparingLong(Intent::n));
  // Reservations that arrived before their intent: in arrival order, and by origin and size.
  private final ArrayDeque<Early> early = new ArrayDeque<>();
  private final Map<String, ArrayDeque<Early>> earlyByKey = new HashMap<>();
  private long added;
  private long lastHeard = Long.MIN_VALUE;

  /** A peer that announces intents was heard from at {@code nowMillis}. */
  void heard(long nowMillis) {
    lastHeard = Math.max(lastHeard, nowMillis);
  }

  /**
   * Peer {@code origin} will decide a request of {@code promptTokens} at {@code decideAt}; {@code
   * own[j]} uncached tokens on {@code replicas[j]}.
   */
  void add(
      String origin,
      long decideAt,
      int promptTokens,
      int[] replicas,
      double[] own,
      long nowMillis) {
    heard(nowMillis);
    prune(nowMillis);
    if (overtaken(origin, promptTokens, decideAt) || order.size() >= CAPACITY) {
      return;
    }
    order.add(new Intent(origin, decideAt, added++, promptTokens, replicas.clone(), own.clone()));
  }

  /**
   * A reservation of {@code origin}'s, for a prompt of {@code promptTokens}, issued at {@code
   * issuedMillis} (its clock), arrived at {@code nowMillis}: it ends the intent it decided.
   */
  void decided(String origin, int promptTokens, long issuedMillis, long nowMillis) {
    prune(nowMillis);
    Intent low = new Intent("", issuedMillis - MATCH_MILLIS, Long.MIN_VALUE, 0, null, null);
    Intent high =
        new Intent("", issuedMillis + CLOCK_SLACK_MILLIS + 1, Long.MIN_VALUE, 0, null, null);
    for (Iterator<Intent> it = order.subSet(low, true, high, false).iterator(); it.hasNext(); ) {
      Intent intent = it.next();
      if (intent.origin().equals(origin) && intent.promptTokens() == promptTokens) {
        it.remove();
        return;
      }
    }
    if (early.size() < CAPACITY) {
      Early e = new Early(key(origin, promptTokens), issuedMillis, nowMillis);
      early.add(e);
      earlyByKey.computeIfAbsent(e.key(), k -> new ArrayDeque<>()).add(e);
    }
  }

  /** Whether a remembered reservation already decided this intent (and is now forgotten). */
  private boolean overtaken(String origin, int promptTokens, long decideAt) {
    ArrayDeque<Early> same = earlyByKey.get(key(origin, promptTokens));
    if (same == null) {
      return false;
    }
    for (Iterator<Early> it = same.iterator(); it.hasNext(); ) {
      Early e = it.next();
      if (decideAt >= e.issued() - MATCH_MILLIS && decideAt <= e.issued() + CLOCK_SLACK_MILLIS) {
        it.remove();
        early.remove(e);
        if (same.isEmpty()) {
          earlyByKey.remove(e.key());
        }
        return true;
      }
    }
    return false;
  }

  /** Whether a peer announced an intent, or shared its timing, at or after {@code sinceMillis}. */
  boolean heardSince(long sinceMillis) {
    return lastHeard >= sinceMillis;
  }

  /** Reservations remembered now that arrived before any intent they could end. */
  int remembered() {
    return early.size();
  }

  /** Intents kept now. */
  int size() {
    return order.size();
  }

  /**
   * Places the intents due before router {@code self}'s decision at {@code nowMillis} (earlier, or
   * at the same time from a router whose id sorts first), in order: each adds its uncached tokens
   * to {@code phantom} at the candidate {@link #choose} picks, the cost of each candidate and the
   * work queued there ({@code queued} plus the phantoms so far) seen after the phantoms placed
   * before it. This router's own reservations taken at or after an intent's decision time ({@code
   * own}) are left out of its placement: in the order every router shares they come after it, and
   * its router placed it without them (a router deciding several requests of one instant would
   * otherwise push the peers' intents elsewhere with its own first decisions, and disagree with the
   * peers that placed them).
   */
  void place(
      String self,
      long nowMillis,
      int[] candidates,
      String[] ids,
      double[] queued,
      double[] phantom,
      OwnSince own,
      Cost cost,
      Band band,
      int blockSize) {
    prune(nowMillis);
    int n = candidates.length;
    double[] costs = new double[n];
    double[] ahead = new double[n];
    double[] tokens = new double[n];
    double[] mine = null;
    long mineSince = Long.MIN_VALUE;
    for (Intent intent : order) {
      if (intent.decideAt() > nowMillis
          || intent.decideAt() == nowMillis && intent.origin().compareTo(self) >= 0) {
        return;
      }
      if (mine == null || mineSince != intent.decideAt()) {
        mineSince = intent.decideAt();
        mine = own.since(mineSince);
      }
      for (int i = 0; i < n; i++) {
        ahead[i] = Math.max(0, queued[i] - mine[i]) + phantom[i];
        tokens[i] = tokensOn(intent, candidates[i]);
        costs[i] = tokens[i] < 0 ? Double.POSITIVE_INFINITY : cost.of(i, tokens[i], ahead[i]);
      }
      long[] keys = order(intent.origin(), intent.promptTokens(), ids);
      int best = choose(costs, tokens, ahead, keys, band, blockSize);
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
   * of equals the least cost, and of exact equals the least {@code order} ({@link #order}); -1 when
   * every cost is infinite. The band keeps two routers whose timing fits differ a little on the
   * same choice; the order spreads exact ties (identical idle replicas, a cold prompt) over the
   * replicas instead of sending them all to the first: measured at 8 routers, the first took twice
   * the mean prefill (mooncake-synthetic, load max/mean 2.09).
   */
  static int choose(
      double[] cost, double[] own, double[] queued, long[] order, Band band, int blockSize) {
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
      if (cost[i] <= limit
          && own[i] <= ownLimit
          && (queued[i] < queued[best]
              || queued[i] == queued[best]
                  && (cost[i] < cost[best] || cost[i] == cost[best] && order[i] < order[best]))) {
        best = i;
      }
    }
    return best;
  }

  /**
   * An order of the replicas {@code ids} particular to one request, which every router derives
   * alike: from the id of the router that decides it and its prompt size (the intent carries both),
   * and the replicas' ids (not the routers' local numbers for them). Requests of different sizes or
   * routers order the replicas differently, so their exact ties fall on different replicas.
   */
  static long[] order(String origin, int promptTokens, String[] ids) {
    long seed = origin.hashCode() * 0x9E3779B97F4A7C15L + promptTokens;
    long[] keys = new long[ids.length];
    for (int i = 0; i < ids.length; i++) {
      keys[i] = NearTies.mix(seed, ids[i]);
    }
    return keys;
  }

  private static String key(String origin, int promptTokens) {
    return origin + '\u0000' + promptTokens;
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
    while (it.hasNext() && it.next().decideAt() < nowMillis - STALE_MILLIS) {
      it.remove();
    }
    while (!early.isEmpty() && early.peekFirst().arrived() < nowMillis - STALE_MILLIS) {
      Early e = early.removeFirst();
      ArrayDeque<Early> same = earlyByKey.get(e.key());
      same.remove(e);
      if (same.isEmpty()) {
        earlyByKey.remove(e.key());
      }
    }
  }
}

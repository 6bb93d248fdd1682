package io.kvrouter.tracker.policy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What one router knows of the decisions its peers take at the same time as its own: how many
 * routers are active (heard from through their reservations or their periodic marks), this router's
 * turn among them, the propagation delay between them, and how many peer decisions typically fall
 * within one delay of each of its own (those it cannot see and that cannot see it).
 *
 * <p>Everything is learnt from the reservation plane: each peer reservation carries its origin and
 * the origin's clock at decision time ({@code issuedMillis}). The delay is the running mean of
 * {@code now − issued}, clamped to {@code [0, maxDelayMillis]}. Once a delay has passed since one
 * of this router's own decisions, the peer decisions issued within ± the delay of it are known, and
 * their count enters a running mean: the expected number of concurrent unseen peer decisions. The
 * same happens, without waiting, for a burst of this router's own: when it has already taken other
 * decisions within the current delay window, each peer has probably taken as many.
 *
 * <p>Turns: active routers (this one plus every origin heard from within {@code horizonMillis}) are
 * ordered by a hash of their ids, and the order rotates every {@code rotationMillis} of the shared
 * clock, so every router takes every turn in time and routers that decide at once take different
 * turns without asking each other.
 *
 * <p>Cost: O(1) amortised per event, O(routers log routers) per {@link #turn} when membership
 * changed; a ring of the last {@value #RING} peer decision times. Not thread-safe.
 */
final class PeerConcurrency {

  private static final int RING = 1024;
  private static final double ALPHA = 0.05;

  private final long horizonMillis;
  private final long rotationMillis;
  private final long maxDelayMillis;
  private String self = "";
  private final Map<String, Long> lastHeard = new HashMap<>();
  private List<String> order = List.of("");
  private boolean orderStale = true;
  private final long[] peerTimes = new long[RING];
  private int peerCount;
  private final long[] ownPending = new long[RING];
  private int ownHead;
  private int ownSize;
  private double delayMillis;
  private double delayHigh;
  private boolean delayKnown;
  private double concurrent;

  PeerConcurrency(long horizonMillis, long rotationMillis, long maxDelayMillis) {
    this.horizonMillis = horizonMillis;
    this.rotationMillis = Math.max(1, rotationMillis);
    this.maxDelayMillis = maxDelayMillis;
  }

  void bind(String selfId) {
    this.self = selfId;
    orderStale = true;
  }

  /** A peer's reservation arrived at {@code nowMillis}; it was decided at {@code issuedMillis}. */
  void peerDecided(String origin, long issuedMillis, long nowMillis) {
    if (origin.equals(self)) {
      return;
    }
    if (lastHeard.put(origin, nowMillis) == null) {
      orderStale = true;
    }
    if (issuedMillis <= 0) {
      return;
    }
    double d = Math.max(0, Math.min(maxDelayMillis, nowMillis - issuedMillis));
    delayMillis = delayKnown ? 0.9 * delayMillis + 0.1 * d : d;
    // A slowly decaying maximum: a late arrival sets it, then it relaxes towards the later ones
    // (by 2 % of the gap each), so it covers the spread of delays and not only their mean.
    delayHigh = !delayKnown || d > delayHigh ? d : delayHigh + 0.02 * (d - delayHigh);
    delayKnown = true;
    peerTimes[peerCount % RING] = issuedMillis;
    peerCount++;
  }

  /**
   * A peer's periodic mark arrived: it is active, reserving or not. Routers learn each other from
   * marks before the first burst, when no reservation has travelled yet.
   */
  void peerHeard(String origin, long nowMillis) {
    if (origin.equals(self)) {
      return;
    }
    if (lastHeard.put(origin, nowMillis) == null) {
      orderStale = true;
    }
  }

  /** This router took a decision at {@code nowMillis}. */
  void ownDecided(long nowMillis) {
    settle(nowMillis);
    if (ownSize == RING) {
      ownHead = (ownHead + 1) % RING;
      ownSize--;
    }
    ownPending[(ownHead + ownSize) % RING] = nowMillis;
    ownSize++;
  }

  /** The propagation delay between routers as observed, ms (0 before any peer was heard). */
  double delayMillis() {
    return delayKnown ? delayMillis : 0;
  }

  /**
   * The longest propagation delay seen lately, ms (a maximum that decays by 2 % of its gap to each
   * newer observation), or {@code priorMillis} before any peer reservation was observed: a peer
   * decision younger than this may have reached some routers and not others.
   */
  double lateDelayMillis(double priorMillis) {
    return delayKnown ? delayHigh : priorMillis;
  }

  /** Routers active now, this one included. */
  int routers(long nowMillis) {
    forgetSilent(nowMillis);
    return 1 + lastHeard.size();
  }

  /**
   * This router's turn among the active routers at {@code nowMillis}, in {@code [0, routers)}:
   * routers that decide within the same rotation period hold distinct turns. A router that knows no
   * peer gets a turn in {@code [0, 65536)} drawn from its id.
   */
  int turn(long nowMillis) {
    forgetSilent(nowMillis);
    if (orderStale) {
      List<String> ids = new ArrayList<>(lastHeard.keySet());
      ids.add(self);
      ids.sort((a, b) -> Long.compare(mix(a), mix(b)));
      order = ids;
      orderStale = false;
    }
    int k = order.size();
    long rotation = Math.floorDiv(nowMillis, rotationMillis);
    if (k == 1) {
      // Alone, or not yet heard from the others: a turn drawn from the id, so routers that do not
      // know of each other yet still differ.
      return (int) Math.floorMod(mix(self) + rotation, 1L << 16);
    }
    return (int) Math.floorMod(order.indexOf(self) + rotation, (long) k);
  }

  /**
   * This router's place among the active routers in their shared hash order, in {@code [0,
   * routers)}, without rotation: a partition every router agrees on once they have heard of each
   * other. A router that knows no peer gets a place in {@code [0, 65536)} drawn from its id.
   */
  int rank(long nowMillis) {
    turn(nowMillis); // refreshes the order
    if (order.size() == 1) {
      return (int) Math.floorMod(mix(self), 1L << 16);
    }
    return Math.max(0, order.indexOf(self));
  }

  /**
   * Peer decisions issued within one delay of each of this router's settled own decisions (its
   * recent ones count once a delay has passed and their peers are all known). Near 0 for smooth
   * traffic, one or more while requests reach several routers in bursts.
   */
  double concurrentMean(long nowMillis) {
    settle(nowMillis);
    return concurrent;
  }

  /** Finalises own decisions whose concurrent peer decisions are all known by now. */
  private void settle(long nowMillis) {
    double d = delayMillis();
    while (ownSize > 0) {
      long t = ownPending[ownHead];
      if (t + 2 * d + 1 > nowMillis) {
        break;
      }
      double seen = peersWithin(t - d, t + d);
      concurrent = (1 - ALPHA) * concurrent + ALPHA * seen;
      ownHead = (ownHead + 1) % RING;
      ownSize--;
    }
  }

  /** Peer decisions issued in [from, to] among the last {@value #RING}. */
  private int peersWithin(double from, double to) {
    int n = Math.min(peerCount, RING);
    int c = 0;
    for (int i = 0; i < n; i++) {
      long t = peerTimes[(peerCount - 1 - i) % RING];
      if (t >= from && t <= to) {
        c++;
      }
    }
    return c;
  }

  private void forgetSilent(long nowMillis) {
    if (lastHeard.isEmpty()) {
      return; // a lone router: nothing to forget, nothing to allocate per decision
    }
    for (var it = lastHeard.values().iterator(); it.hasNext(); ) {
      if (it.next() < nowMillis - horizonMillis) {
        it.remove();
        orderStale = true;
      }
    }
  }

  private static long mix(String id) {
    long z = id.hashCode() * 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    return z ^ (z >>> 31);
  }
}

package io.kvrouter.tracker.policy;

import java.util.Arrays;

/**
 * The peers' reservations decided within the last few propagation delays: the ones this router may
 * or may not have received yet, so that two routers deciding at the same moment hold different
 * subsets of them. {@link NearTies#byOwnLoad} finds its near-ties without them, on a view every
 * router shares however their arrivals interleave, and leaves their balance to each router
 * spreading its own decisions. Under intents a second instance holds this router's own recent
 * reservations, which {@link PeerIntents#place} leaves out of the intents due before them.
 *
 * <p>A ring of the last {@value #CAPACITY} peer reservations (replica, prefill tokens, decision
 * time on the origin's clock). Cost: O(1) per reservation, O(kept) per decision. Not thread-safe:
 * owned by one policy instance.
 */
final class PeerRecent {

  static final int CAPACITY = 256;

  private final int[] replicas = new int[CAPACITY];
  private final double[] prefill = new double[CAPACITY];
  private final long[] issued = new long[CAPACITY];
  private int count;

  /**
   * A peer reserved {@code replica}, decided at {@code issuedMillis} on its clock and received at
   * {@code nowMillis} on this one (a peer clock ahead of this one counts as the arrival time).
   */
  void add(int replica, double prefillTokens, long issuedMillis, long nowMillis) {
    int i = count % CAPACITY;
    replicas[i] = replica;
    prefill[i] = prefillTokens;
    issued[i] = Math.min(issuedMillis, nowMillis);
    count++;
  }

  /**
   * Prefill tokens of the peer reservations decided after {@code sinceMillis}, per replica index,
   * into {@code out} (grown as needed and returned; cleared first).
   */
  double[] prefillSince(long sinceMillis, double[] out) {
    Arrays.fill(out, 0);
    for (int i = 0, n = Math.min(count, CAPACITY); i < n; i++) {
      int r = replicas[i];
      if (r >= 0 && issued[i] > sinceMillis) {
        if (r >= out.length) {
          out = Arrays.copyOf(out, Math.max(r + 1, 2 * out.length));
        }
        out[r] += prefill[i];
      }
    }
    return out;
  }

  /** A replica left: its reservations no longer count. */
  void forget(int replica) {
    for (int i = 0, n = Math.min(count, CAPACITY); i < n; i++) {
      if (replicas[i] == replica) {
        replicas[i] = -1;
      }
    }
  }
}

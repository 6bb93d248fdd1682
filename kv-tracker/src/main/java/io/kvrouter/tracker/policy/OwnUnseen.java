package io.kvrouter.tracker.policy;

/**
 * This router's own reservations that its peers cannot have seen yet: those made less than one
 * propagation delay ago ({@link PeerConcurrency#delayMillis()}), which are on their way to the
 * peers' trackers. Taking them out of this router's view gives the view every router shares right
 * now (what all of them have received), the one {@link TtftPolicy} orders near-ties by so that
 * routers deciding at once stripe over them ({@link #count()} is how many such decisions this
 * router has taken, its place in the stripe).
 *
 * <p>Per reservation: its replica, its prefill tokens until its first token arrives (then 0, as the
 * ledger's prefill load drops it too) and the tokens it wrote ({@link WritePressure}). At most
 * {@value #CAPACITY} are kept, the oldest dropped first: a router takes far fewer decisions within
 * one delay.
 *
 * <p>Cost: O(1) per add, O(kept) per lookup and prune; no allocation after construction. Not
 * thread-safe: owned by one policy instance.
 */
final class OwnUnseen {

  static final int CAPACITY = 64;

  private final String[] ids = new String[CAPACITY];
  private final int[] replicas = new int[CAPACITY];
  private final double[] prefill = new double[CAPACITY];
  private final double[] written = new double[CAPACITY];
  private final long[] at = new long[CAPACITY];
  private int head;
  private int size;

  /** Own reservation {@code requestId} on {@code replica} was made at {@code now}. */
  void add(String requestId, int replica, double prefillTokens, double writtenTokens, long now) {
    if (size == CAPACITY) {
      drop();
    }
    int i = (head + size) % CAPACITY;
    ids[i] = requestId;
    replicas[i] = replica;
    prefill[i] = prefillTokens;
    written[i] = writtenTokens;
    at[i] = now;
    size++;
  }

  /** The reservation's first token arrived: it no longer weighs as prefill. */
  void prefilled(String requestId) {
    int i = find(requestId);
    if (i >= 0) {
      prefill[i] = 0;
    }
  }

  /**
   * The reservation was given back or ended: it no longer counts (a reservation given back before
   * its announcement, as a strict gate's refusal, never reaches the peers at all).
   */
  void released(String requestId) {
    int i = find(requestId);
    if (i >= 0) {
      replicas[i] = -1;
      prefill[i] = 0;
      written[i] = 0;
    }
  }

  /** Forgets the reservations made {@code windowMillis} or more before {@code now}: seen by now. */
  void prune(long now, double windowMillis) {
    while (size > 0 && now - at[head] >= windowMillis) {
      drop();
    }
  }

  /** Own decisions still unseen by the peers (after {@link #prune}). */
  int count() {
    int c = 0;
    for (int k = 0; k < size; k++) {
      c += replicas[(head + k) % CAPACITY] >= 0 ? 1 : 0;
    }
    return c;
  }

  /** Prefill tokens of the unseen own reservations on {@code replica} not yet prefilled. */
  double prefillOn(int replica) {
    return sumOn(replica, prefill);
  }

  /** Tokens the unseen own reservations on {@code replica} wrote there. */
  double writtenOn(int replica) {
    return sumOn(replica, written);
  }

  /** The sum of {@code values} over the unseen own reservations on {@code replica}. */
  private double sumOn(int replica, double[] values) {
    double s = 0;
    for (int k = 0; k < size; k++) {
      int i = (head + k) % CAPACITY;
      s += replicas[i] == replica ? values[i] : 0;
    }
    return s;
  }

  /** The replica left: its reservations no longer count. */
  void forgetReplica(int replica) {
    for (int k = 0; k < size; k++) {
      int i = (head + k) % CAPACITY;
      if (replicas[i] == replica) {
        replicas[i] = -1;
      }
    }
  }

  private int find(String requestId) {
    for (int k = size - 1; k >= 0; k--) {
      int i = (head + k) % CAPACITY;
      if (requestId.equals(ids[i])) {
        return i;
      }
    }
    return -1;
  }

  private void drop() {
    ids[head] = null;
    head = (head + 1) % CAPACITY;
    size--;
  }
}

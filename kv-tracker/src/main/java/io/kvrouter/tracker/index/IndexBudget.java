package io.kvrouter.tracker.index;

import java.util.Arrays;

/**
 * The prefix index's memory budget: an access clock per node slot (when the node was last matched,
 * or stored if never matched) and the choice of which nodes to evict, the least recently matched,
 * when the index's estimated size passes the budget.
 *
 * <p>Contract: the index's {@link NodeTable} tells this class about every slot it fills ({@link
 * #stored}), moves ({@link #moved}) and every reallocation of its table ({@link #resized}, then
 * {@link #carried} per entry), and its {@link PrefixMatcher} about every match that finds a slot
 * ({@link #matched}, after {@link #tick} once per match). {@link #over} says when to evict, {@link
 * #target} how far down, and {@link #cutoff} the stamp at or below which a node goes: the oldest
 * {@code fraction} of the nodes, estimated from a sample of at most {@link #SAMPLE} stamps. The
 * size estimate is {@link #NODE_BYTES} per node plus {@link #HOLDING_BYTES} per (replica, block)
 * holding plus {@link #SUMMARY_BYTES} per node for the run summary plus {@link #RUN_BYTES} per
 * predicted run, the structures' cost at the tables' typical load (see {@link PrefixIndex}'s
 * measured 40 to 49 bytes per block). Tables never shrink, so the heap they hold stays at what the
 * budget's content needed at its peak.
 *
 * <p>Cost: 4 bytes per table slot; one store per matched block; an eviction pass samples at most
 * {@link #SAMPLE} slots and sweeps the table once, and frees a tenth of the budget, so its cost is
 * amortised over the stores that filled it.
 *
 * <p>Implementation notes: the clock is an int bumped per match; before it would overflow, every
 * stamp is halved relative to the oldest (order is kept). Sampled LRU, as Redis approximates LRU
 * with a sample of keys ({@code maxmemory-samples}, redis.io "Key eviction"), rather than an exact
 * list: a linked list per node would cost more than the node itself.
 */
final class IndexBudget {

  /** Estimated bytes per node: a 16-byte table slot and a 4-byte stamp at load about 0.67. */
  static final int NODE_BYTES = 30;

  /**
   * Estimated bytes per node of the index's {@link RunSummary}: its tables are sized from the node
   * table's capacity (4.6 to 9.3 bytes per table slot), so at load about 0.67 they cost 7 to 14
   * bytes per node. Counted whether or not a claim has allocated them yet: the budget bounds what
   * the index may come to hold.
   */
  static final int SUMMARY_BYTES = 10;

  /** Estimated bytes per (replica, block) holding: a 16-byte bridge slot at load about 0.67. */
  static final int HOLDING_BYTES = 24;

  /** Estimated bytes per predicted run (the run object and its queue entry). */
  static final int RUN_BYTES = 80;

  /** Slots whose stamps estimate the cutoff. */
  static final int SAMPLE = 4096;

  private final long maxBytes;
  private int[] stamps;
  private int[] next;
  private int clock = 1;

  /**
   * @param maxBytes the budget, positive
   * @param capacity the index table's slot count
   */
  IndexBudget(long maxBytes, int capacity) {
    if (maxBytes <= 0) {
      throw new IllegalArgumentException("the index budget must be positive, was " + maxBytes);
    }
    this.maxBytes = maxBytes;
    this.stamps = new int[capacity];
  }

  /** The estimated size of an index holding this much. */
  static long estimate(long nodes, long holdings, long runs) {
    return nodes * (NODE_BYTES + SUMMARY_BYTES) + holdings * HOLDING_BYTES + runs * RUN_BYTES;
  }

  boolean over(long estimatedBytes) {
    return estimatedBytes > maxBytes;
  }

  /** Where an eviction pass stops: nine tenths of the budget. */
  long target() {
    return maxBytes - maxBytes / 10;
  }

  /**
   * A new match begins: what it finds is stamped with a later time than anything before. Returns
   * true when every stamp was just renormalised, so stamps kept elsewhere (the run summary's) are
   * no longer comparable with these.
   */
  boolean tick() {
    if (++clock == Integer.MAX_VALUE) {
      renormalise();
      return true;
    }
    return false;
  }

  /** The current time, for {@link #matched} in a loop. */
  int now() {
    return clock;
  }

  /** The stamps, indexed by slot, for {@link PrefixIndex#match}'s loop. */
  int[] stamps() {
    return stamps;
  }

  void stored(int slot) {
    stamps[slot] = clock;
  }

  /** {@code slot} was last matched at {@code stamp} (a later time learnt from elsewhere). */
  void restamp(int slot, int stamp) {
    stamps[slot] = stamp;
  }

  void moved(int from, int to) {
    stamps[to] = stamps[from];
    stamps[from] = 0;
  }

  /** The table is being reallocated to {@code capacity} slots; {@link #carried} follows. */
  void resized(int capacity) {
    next = new int[capacity];
  }

  void carried(int from, int to) {
    next[to] = stamps[from];
  }

  /** The reallocation is over. */
  void rehashed() {
    stamps = next;
    next = null;
  }

  /**
   * The stamp at or below which a node is among the least recently matched {@code fraction} of the
   * nodes, estimated from the stamps of a sample of them ({@code sample[0, n)}, reordered).
   */
  static int cutoff(int[] sample, int n, double fraction) {
    if (n == 0) {
      return 0;
    }
    Arrays.sort(sample, 0, n);
    int at = (int) Math.min(n - 1, Math.max(0, Math.ceil(fraction * n) - 1));
    return sample[at];
  }

  /** The stamp of {@code slot}. */
  int stamp(int slot) {
    return stamps[slot];
  }

  private void renormalise() {
    int oldest = Integer.MAX_VALUE;
    for (int s : stamps) {
      if (s != 0 && s < oldest) {
        oldest = s;
      }
    }
    for (int i = 0; i < stamps.length; i++) {
      if (stamps[i] != 0) {
        stamps[i] = 1 + (stamps[i] - oldest) / 2;
      }
    }
    clock = 1 + (clock - oldest) / 2;
  }
}

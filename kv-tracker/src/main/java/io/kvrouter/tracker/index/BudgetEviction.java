package io.kvrouter.tracker.index;

import static io.kvrouter.tracker.index.NodeTable.CLAIMED;
import static io.kvrouter.tracker.index.PrefixIndex.GPU_BIT;
import static io.kvrouter.tracker.index.PrefixIndex.MAX_REPLICAS;
import static io.kvrouter.tracker.index.PrefixIndex.REAL_BITS;

/**
 * The prefix index's side of its memory budget: the estimate of its bytes, and the eviction of its
 * least recently matched nodes, every holder of each, when a store takes the estimate over the
 * {@link IndexBudget}. Evicted holdings leave the digests (a budget-trimmed replica is counted in
 * {@link #evicted}, so its digest is not compared with untrimmed ones) and the bridges; a holder
 * whose GPU copy was in a claimed run loses that claim, which would otherwise still apply the whole
 * run to a match. A match served by a claim does not stamp the run's nodes, so before evicting a
 * node with an old stamp this asks the claims it is in when they last served a match, and keeps
 * (and restamps) a node matched that way since the cutoff.
 *
 * <p>Cost: an eviction sweeps the node table once per pass (at most six, usually one), amortised
 * over the stores that filled the tenth of the budget it frees. Not thread-safe: owned by one
 * {@link PrefixIndex}.
 */
final class BudgetEviction {

  private final IndexBudget budget; // null: no memory budget
  private final NodeTable nodes;
  private final HashBridges bridges;
  private final ReplicaDigests digests;
  private final RunSummary summary;
  private final PredictedRuns runs;
  private final long[] evicted = new long[MAX_REPLICAS]; // since the replica's last clear
  private long evictedTotal;

  BudgetEviction(
      IndexBudget budget,
      NodeTable nodes,
      HashBridges bridges,
      ReplicaDigests digests,
      RunSummary summary,
      PredictedRuns runs) {
    this.budget = budget;
    this.nodes = nodes;
    this.bridges = bridges;
    this.digests = digests;
    this.summary = summary;
    this.runs = runs;
  }

  /** Estimated bytes the index holds (see {@link IndexBudget#estimate}). */
  long estimatedBytes() {
    return IndexBudget.estimate(nodes.size(), bridges.holdings(), runs.size());
  }

  /** Evicts down to the budget's target if the estimate is over the budget (no budget: never). */
  void afterStore() {
    if (budget != null && budget.over(estimatedBytes())) {
      evictLeastRecentlyMatched();
    }
  }

  /** The replica was cleared: its evictions no longer count. */
  void replicaCleared(int replica) {
    evicted[replica] = 0;
  }

  /** Holdings evicted from {@code replica} since it was last cleared. */
  long evicted(int replica) {
    return evicted[replica];
  }

  /** Holdings evicted, over all replicas, ever. */
  long evictedTotal() {
    return evictedTotal;
  }

  private void evictLeastRecentlyMatched() {
    long target = budget.target();
    for (int pass = 0; pass < 6 && estimatedBytes() > target; pass++) {
      // Each pass forgets about the share of nodes the estimate says is too much (all of them at
      // the last), then the bridges' entries of what it evicted; a hash reused by several keys can
      // leave fewer entries to drop than counted, which the next pass makes up for.
      double fraction =
          pass == 5 ? 1.0 : Math.min(1.0, 1.0 - (double) target / estimatedBytes() + 0.01);
      int cutoff = sampledCutoff(fraction);
      LongLongMap[] victims = new LongLongMap[MAX_REPLICAS];
      long[] pending = {0}; // holdings evicted whose bridge entries are still to go
      int s = 0;
      while (s < nodes.capacity && estimate(pending[0]) > target) {
        long key = nodes.table[2 * s];
        if (key != 0L && budget.stamp(s) <= cutoff) {
          int viaClaims = lastMatchedViaClaims(s, key);
          if (viaClaims > cutoff) {
            budget.restamp(s, viaClaims); // matched lately, through a claim that skipped it
            s++;
            continue;
          }
          evictSlot(s, key, victims, pending);
          if (nodes.table[2 * s] != 0L) {
            continue; // refilled by the backward shift: look at it again
          }
        }
        s++;
      }
      bridges.forgetKeys(victims);
    }
  }

  private long estimate(long pendingHoldings) {
    return IndexBudget.estimate(nodes.size(), bridges.holdings() - pendingHoldings, runs.size());
  }

  /** The cutoff stamp of the oldest {@code fraction} of the nodes, from a strided sample. */
  private int sampledCutoff(double fraction) {
    if (fraction >= 1.0) {
      return Integer.MAX_VALUE;
    }
    int[] sample = new int[IndexBudget.SAMPLE];
    int stride = Math.max(1, nodes.capacity / IndexBudget.SAMPLE);
    int n = 0;
    for (int s = 0; s < nodes.capacity && n < sample.length; s += stride) {
      if (nodes.table[2 * s] != 0L) {
        sample[n++] = budget.stamp(s);
      }
    }
    return IndexBudget.cutoff(sample, n, fraction);
  }

  /**
   * When a match last went over the node at slot {@code s} through a run claim (which does not
   * stamp the run's nodes), 0 if none of its entries is in a live claim.
   */
  private int lastMatchedViaClaims(int s, long key) {
    if (summary.claims() == 0) {
      return 0;
    }
    char[] scratch = nodes.scratch;
    int n = nodes.decode(nodes.table[2 * s + 1]);
    int last = 0;
    for (int i = 0; i < n; i++) {
      if ((scratch[i] & (GPU_BIT | CLAIMED)) == (GPU_BIT | CLAIMED)) {
        last = Math.max(last, summary.lastMatched(key, scratch[i] >>> 4));
      }
    }
    return last;
  }

  /** Removes the node at slot {@code s} with every holding of it. */
  private void evictSlot(int s, long key, LongLongMap[] victims, long[] pending) {
    char[] scratch = nodes.scratch;
    int n = nodes.decode(nodes.table[2 * s + 1]);
    for (int i = 0; i < n; i++) {
      int replica = scratch[i] >>> 4;
      int mask = scratch[i] & REAL_BITS;
      if ((scratch[i] & (GPU_BIT | CLAIMED)) == (GPU_BIT | CLAIMED)) {
        summary.lost(key, replica);
      }
      if (mask != 0) {
        digests.remove(replica, key, mask);
        evicted[replica] += Integer.bitCount(mask);
        evictedTotal += Integer.bitCount(mask);
        if (victims[replica] == null) {
          victims[replica] = new LongLongMap(64);
        }
        victims[replica].put(key, 1L, 0L);
        pending[0]++;
      }
    }
    nodes.removeAt(s);
  }
}

package io.kvrouter.loadtest.baselines;

import io.kvrouter.loadtest.baselines.PrebleTree.Node;
import java.util.ArrayDeque;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Preble's sliding-window load histogram (WukLab/preble at 8e7906a, {@code
 * preble/global_scheduler_with_time.py}: {@code SlidingWindowHistogram}, lines 23-177, chiefly
 * {@code update} 52, {@code _remove_old_entries} 77, {@code get_prefill_cost} 149 and {@code
 * get_node_cost} 152): per important node, the requests of the last three minutes, their prompt and
 * hit lengths, and from them each replica's load.
 *
 * <pre>
 *   miss rate(node)    = 1 − Σ hit blocks / Σ prompt blocks        over the window
 *   prefill(node)      = miss rate · requests · prefill time(node's blocks) / |allocation(node)|
 *   cost(node, r)      = prefill(node) + running requests through node on r · decode time(r)
 *   load(r)            = Σ cost(node, r) over window nodes allocated to r
 * </pre>
 *
 * A request's hit is the part of its prompt before its own leaf (what the tree already held). When
 * a node's last request leaves the window its allocation is cleared. Preble multiplies the running
 * requests by the node's latest output length and the replica's median time per output token; the
 * router here knows neither, and uses the replica's median measured decode time per request (see
 * {@link PreblePolicy}).
 *
 * <p>Cost: O(1) amortised per request added or expired; {@link #load} is O(window nodes ×
 * replicas). Not thread-safe.
 */
final class PrebleWindow {

  /** A node's window statistics; moves with the node's role when a split renames it. */
  static final class Stats {
    Node owner;
    int requests;
    long hitBlocks;
    long promptBlocks;
  }

  private record Entry(long timeMillis, Stats stats, long hitBlocks, long promptBlocks) {}

  private final long windowMillis;
  private final ArrayDeque<Entry> entries = new ArrayDeque<>();
  private final Set<Stats> live = new LinkedHashSet<>();

  PrebleWindow(long windowMillis) {
    this.windowMillis = windowMillis;
  }

  /** A request through {@code important}, ending at {@code leaf}, was routed at {@code now}. */
  void add(long nowMillis, Node important, Node leaf) {
    if (important.stats == null) {
      important.stats = new Stats();
      important.stats.owner = important;
      live.add(important.stats);
    }
    Stats s = important.stats;
    long hit = leaf.contextSoFar();
    long prompt = leaf.contextLength;
    s.requests++;
    s.hitBlocks += hit;
    s.promptBlocks += prompt;
    entries.addLast(new Entry(nowMillis, s, hit, prompt));
    expire(nowMillis);
  }

  /** Drops the requests older than the window; a node left with none loses its allocation. */
  void expire(long nowMillis) {
    while (!entries.isEmpty() && entries.peekFirst().timeMillis() < nowMillis - windowMillis) {
      Entry e = entries.pollFirst();
      Stats s = e.stats();
      s.requests--;
      s.hitBlocks -= e.hitBlocks();
      s.promptBlocks -= e.promptBlocks();
      if (s.requests <= 0) {
        live.remove(s);
        if (s.owner != null) {
          s.owner.stats = null;
          s.owner.allocation.clear();
        }
      }
    }
  }

  /** A split made {@code upper} the important node in place of {@code lower}: move its stats. */
  void rename(Node lower, Node upper) {
    if (lower.stats != null && upper.large() && !lower.large()) {
      upper.stats = lower.stats;
      upper.stats.owner = upper;
      lower.stats = null;
    }
  }

  /** The window's nodes, oldest first. */
  Iterable<Stats> nodes() {
    return live;
  }

  static double missRate(Stats s) {
    return s.promptBlocks == 0 ? 1 : 1 - (double) s.hitBlocks / s.promptBlocks;
  }

  /** {@code cost(node, r)} in seconds. */
  static double cost(Stats s, int replica, int blockSize, double decodeSeconds) {
    Node n = s.owner;
    double prefill =
        missRate(s)
            * s.requests
            * PreblePolicy.prefillSeconds((long) n.blocks() * blockSize)
            / Math.max(1, n.allocation.cardinality());
    return prefill + n.refs(replica) * decodeSeconds;
  }

  /**
   * Load per replica: {@code out[r] = Σ cost(node, r)} over the window's nodes allocated to {@code
   * r} that had at least {@code minRequests} requests.
   */
  double[] load(int replicas, int blockSize, double[] decodeSeconds, int minRequests) {
    double[] out = new double[replicas];
    for (Stats s : live) {
      if (s.requests < minRequests) {
        continue;
      }
      for (int r = s.owner.allocation.nextSetBit(0);
          r >= 0 && r < replicas;
          r = s.owner.allocation.nextSetBit(r + 1)) {
        out[r] += cost(s, r, blockSize, decodeSeconds[r]);
      }
    }
    return out;
  }
}

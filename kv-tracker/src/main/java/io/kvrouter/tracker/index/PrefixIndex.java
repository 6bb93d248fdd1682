package io.kvrouter.tracker.index;

import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.Tier;

/**
 * The prefix index: which replicas hold which prompt blocks, in which tier, plus predicted entries
 * with a deadline, plus a per-replica bridge from engine hashes to router keys and a per-replica
 * digest.
 *
 * <p><b>Contract.</b> Replicas are small ints in {@code [0, MAX_REPLICAS)} (see {@link
 * ReplicaIds}). A router key names a block together with its whole prefix, so the tree of prefixes
 * is represented as a map from key to holders: a prompt's keys walk that tree from the root. Every
 * mutation is idempotent: applying the same store, remove, clear or drop twice in a row leaves the
 * state as applying it once.
 *
 * <ul>
 *   <li>{@link #store}: the replica holds the blocks in the tier; the bridge learns engine hash to
 *       key (the latest mapping of a hash wins: engines that hash pages without chaining, such as
 *       old SGLang, reuse hashes).
 *   <li>{@link #remove}: by engine hash, through the bridge; the bridge forgets a hash once the
 *       replica holds its key in no tier. Unknown hashes are ignored.
 *   <li>{@link #clearReplica}: the replica holds nothing in any tier (predicted entries stay: they
 *       stand for requests still running there). {@link #dropReplica}: also forgets predicted
 *       entries and the bridge: the replica left.
 *   <li>{@link #predict}/{@link #expirePredicted}: predicted runs ({@link PredictedRuns}): a
 *       reservation's new keys, live until the deadline. A block a replica holds by engine events
 *       counts in its real tier; a predicted run only adds blocks the replica does not hold (it is
 *       not removed when the engine confirms its blocks, and its TTL bounds how long it can outlive
 *       an eviction).
 *   <li>{@link #match}: per replica, the leading blocks of a prompt it holds (by engine events or
 *       predicted runs), stopping at the first block no replica still in the run holds.
 *   <li>{@link #digest}: per replica, count and sum of mixed (key, tier) pairs of blocks held by
 *       engine events; predicted entries are not part of it, because they depend on reservation
 *       traffic rather than on that replica's event stream.
 * </ul>
 *
 * <p><b>Cost.</b> Store and remove: expected O(1) per block, amortised, plus O(holders of that
 * block). Predict and expiry: O(1) table work per reservation (plus a sequential comparison with
 * live runs of the same first key). Match: one table probe per prompt block plus one run-table
 * probe while runs exist; the per-holder work is done once per run of blocks with equal holders
 * (O(prompt blocks + holder changes x holders)), not once per block. Clear and drop: O(index
 * capacity), a scan: they follow engine restarts and membership changes, rare next to block events.
 * Memory per indexed block held by one replica: 16 bytes per node slot at load 0.53 to 0.8 (20 to
 * 30 bytes per block) plus 16 bytes per bridge slot at the same load (20 to 30 bytes); a block held
 * by more than four replicas adds an overflow array of 2 bytes per holder (plus a 16-byte array
 * header). Measured (HeapPerBlock, 1,048,576 blocks over 8 replicas, bridges included): 40.3 bytes
 * per block when the index is sized up front ({@code expectedBlocks}), 49.2 bytes when it grew to
 * that size (the node table then sits at load 0.55). Match: one table probe per prompt block, about
 * 18 ns per block on a 1M-block tree (memory latency, partly overlapped), except over runs of
 * {@code span} blocks (32) that the few replicas still in the match (at most four) are known to
 * hold whole on GPU: one {@link RunSummary} probe per run there. The summary adds 4 to 8 bytes per
 * indexed block once a match has claimed a run, and one summary probe to each GPU block removed
 * while claims exist.
 *
 * <p>Memory budget and run summary together ({@code maxBytes}, {@link IndexBudget}): the budget's
 * estimate counts the summary ({@link IndexBudget#SUMMARY_BYTES} per node), since its tables are
 * sized from the node table's capacity as the budget's own stamps are, and a budget that left them
 * out would let the heap pass it by about a fifth. A node the budget evicts ends every claim one of
 * its GPU holders had it in, as a GPU loss does, so a claim never applies a run with a block gone.
 * A match served by a claim does not touch the run's nodes, so it stamps the claim instead: before
 * evicting a node whose stamp is old, the budget asks the claims it is in when they last served a
 * match, and keeps (and restamps) a node matched that way since the cutoff. Node moves (backward
 * shift, rehash) carry the budget's stamps and the CLAIMED flags alike; the summary names blocks by
 * key, not slot, so moves do not concern it.
 *
 * <p>Layout: this class applies events and answers queries over parts with one job each: the {@link
 * NodeTable} (nodes and their holder words), the {@link PrefixMatcher} (the match walk), the {@link
 * HashBridges} (engine hash to router key), the {@link ReplicaDigests}, the {@link PredictedRuns},
 * the {@link RunSummary} and the {@link BudgetEviction} with its {@link IndexBudget}. Their
 * implementation notes sit with each.
 *
 * <p>Not thread-safe: one owner (the {@code KvTracker} actor, or a single-threaded lab).
 */
public final class PrefixIndex {

  /** Most replicas one index can tell apart. */
  public static final int MAX_REPLICAS = 2048;

  static final int GPU_BIT = 1;
  static final int CPU_BIT = 2;
  static final int DISK_BIT = 4;
  static final int PREDICTED_BIT = 8;
  static final int REAL_BITS = GPU_BIT | CPU_BIT | DISK_BIT;

  private final NodeTable nodes;
  private final HashBridges bridges = new HashBridges();
  private final WindowHoldings window = new WindowHoldings(1 << 20);
  private final ReplicaDigests digests = new ReplicaDigests();
  private final PredictedRuns runs = new PredictedRuns();
  private final RunSummary summary;
  private final PrefixMatcher matcher;
  private final BudgetEviction eviction;

  /** An empty index sized for {@code expectedBlocks} nodes before it first grows, no budget. */
  public PrefixIndex(int expectedBlocks) {
    this(expectedBlocks, 0L);
  }

  /**
   * An empty index sized for {@code expectedBlocks} nodes before it first grows, holding at most
   * about {@code maxBytes} (0: no budget) by evicting its least recently matched blocks ({@link
   * IndexBudget}).
   */
  public PrefixIndex(int expectedBlocks, long maxBytes) {
    this(expectedBlocks, maxBytes, RunSummary.SPAN);
  }

  /**
   * As {@link #PrefixIndex(int, long)}, with runs of {@code span} blocks in the run summary (tests
   * use short runs; the tracker's are {@link RunSummary#SPAN}).
   */
  PrefixIndex(int expectedBlocks, long maxBytes, int span) {
    summary = new RunSummary(span);
    int capacity = Hashing.capacityFor(Math.max(16, expectedBlocks), NodeTable.MAX_LOAD);
    IndexBudget budget = maxBytes > 0 ? new IndexBudget(maxBytes, capacity) : null;
    nodes = new NodeTable(capacity, summary, budget);
    matcher = new PrefixMatcher(nodes, runs, summary, budget);
    eviction = new BudgetEviction(budget, nodes, bridges, digests, summary, runs);
  }

  public PrefixIndex() {
    this(1024);
  }

  static int tierBit(Tier tier) {
    return 1 << tier.ordinal();
  }

  private static void checkReplica(int replica) {
    if (replica < 0 || replica >= MAX_REPLICAS) {
      throw new IllegalArgumentException("replica index out of range: " + replica);
    }
  }

  // ---------------------------------------------------------------- engine events

  /**
   * Applies a {@link BlocksStored} of {@code replica}; returns how many (block, tier) holdings are
   * new. The parent key is implied by the chained keys and not checked.
   */
  public int store(int replica, BlocksStored event) {
    checkReplica(replica);
    long[] blockKeys = event.blockKeys();
    long[] hashes = event.engineHashes();
    for (long k : blockKeys) {
      if (k == BlocksStored.ROOT) {
        throw new IllegalArgumentException("a block key is 0 (reserved for ROOT)");
      }
    }
    int bit = tierBit(event.tier());
    int added = 0;
    for (int i = 0; i < blockKeys.length; i++) {
      long key = blockKeys[i];
      bridges.learn(replica, hashes[i], key);
      int old = nodes.update(key, replica, bit, 0);
      if ((old & bit) == 0) {
        digests.add(replica, key, bit);
        added++;
      }
    }
    eviction.afterStore();
    return added;
  }

  /** Applies a {@link BlocksRemoved} of {@code replica}; returns how many holdings it ended. */
  public int remove(int replica, BlocksRemoved event) {
    checkReplica(replica);
    if (!bridges.has(replica)) {
      return 0;
    }
    int bit = tierBit(event.tier());
    int removed = 0;
    for (long hash : event.engineHashes()) {
      long key = bridges.keyOf(replica, hash);
      if (key == 0L) {
        continue;
      }
      int old = nodes.update(key, replica, 0, bit);
      if ((old & bit) != 0) {
        digests.remove(replica, key, bit);
        removed++;
        if (bit == GPU_BIT && (old & NodeTable.CLAIMED) != 0) {
          summary.lost(key, replica);
        }
      }
      if ((old & REAL_BITS & ~bit) == 0) {
        bridges.forget(replica, hash);
      }
    }
    return removed;
  }

  /** The replica holds no block in any tier (its predicted entries stay). */
  public void clearReplica(int replica) {
    checkReplica(replica);
    window.clear(replica);
    summary.replicaCleared(replica);
    bridges.clear(replica);
    eviction.replicaCleared(replica);
    if (!digests.empty(replica)) {
      nodes.clearReplica(replica);
    }
    digests.clear(replica);
  }

  /** The replica left: forget its blocks, predicted entries, bridge and digest. */
  public void dropReplica(int replica) {
    clearReplica(replica);
    bridges.drop(replica);
    runs.dropReplica(replica);
  }

  // ---------------------------------------------------------------- hybrid models

  /** A hybrid replica's sliding-window group stored or dropped blocks ({@link WindowHoldings}). */
  public void window(int replica, io.kvrouter.protocol.WindowBlocks event) {
    checkReplica(replica);
    window.apply(replica, event);
  }

  /**
   * The leading blocks of a match of {@code matched} blocks of {@code promptKeys} that {@code
   * replica} can reuse: {@code matched} unless it runs a hybrid model whose sliding-window group
   * lacks the window before the match's end ({@link SlidingWindowHit}).
   */
  public int windowCredited(int replica, long[] promptKeys, int matched, int blockSize) {
    return window.credited(replica, promptKeys, matched, blockSize);
  }

  /**
   * Shrinks each hybrid replica's match in {@code out} (just made for {@code promptKeys}) to what
   * its sliding-window group can reuse ({@link MatchResult#truncate}); nothing when no replica
   * reported a window group.
   */
  public void applyWindows(long[] promptKeys, int blockSize, MatchResult out) {
    if (window.isEmpty()) {
      return;
    }
    for (int r : out.holders()) {
      out.truncate(r, window.credited(r, promptKeys, out.matched(r), blockSize));
    }
  }

  // ---------------------------------------------------------------- predicted entries

  /**
   * Predicts that {@code replica} will hold the consecutive prompt blocks {@code keys[from, to)}
   * until {@code deadline}. Keeps a reference to {@code keys}, which must not be mutated afterwards
   * (the arrays of protocol records never are). O(1) table work, plus a comparison with live runs
   * of the same first key.
   */
  public void predict(int replica, long[] keys, int from, int to, long deadline) {
    checkReplica(replica);
    if (from >= to) {
      return;
    }
    for (int i = from; i < to; i++) {
      if (keys[i] == 0L) {
        throw new IllegalArgumentException("a block key is 0 (reserved for ROOT)");
      }
    }
    runs.add(replica, keys, from, to, deadline);
  }

  /**
   * The engine has had its chance to store the blocks {@code keys[from, to)} predicted on {@code
   * replica}: predicted runs of that replica starting with them end at {@code deadline} at the
   * latest (blocks the engine confirmed stay, as its own). Keeps no reference to {@code keys}.
   */
  public void retirePredicted(int replica, long[] keys, int from, int to, long deadline) {
    checkReplica(replica);
    if (from < to) {
      runs.retire(replica, keys, from, to, deadline);
    }
  }

  /**
   * Ends every predicted run whose deadline is at or before {@code nowMillis}; returns how many.
   */
  public int expirePredicted(long nowMillis) {
    return runs.expire(nowMillis);
  }

  /** Live predicted runs over all replicas. */
  public int predictedRuns() {
    return runs.size();
  }

  // ---------------------------------------------------------------- queries

  /**
   * Matches the first {@code count} keys of a prompt; {@code out} is reset first. Allocation-free.
   */
  public void match(long[] promptKeys, int count, MatchResult out) {
    out.reset(count);
    out.heldBlocks(digests.counts());
    matcher.match(promptKeys, count, out);
  }

  /** Tier bits {@code replica} holds {@code key} with by engine events (GPU=1, CPU=2, DISK=4). */
  int maskOf(long key, int replica) {
    return nodes.maskOf(key, replica);
  }

  /** True when {@code replica} holds {@code key} in {@code tier} by engine events. */
  public boolean holds(int replica, long key, Tier tier) {
    return (maskOf(key, replica) & tierBit(tier)) != 0;
  }

  /** The order-independent digest of what {@code replica} holds by engine events. */
  public ReplicaDigest digest(int replica) {
    checkReplica(replica);
    return digests.of(replica);
  }

  /** Distinct blocks (nodes) in the index. */
  public int nodes() {
    return nodes.size();
  }

  /** Live claims in the run summary (for tests). */
  int runClaims() {
    return summary.claims();
  }

  /** Engine hashes the bridge of {@code replica} knows. */
  public int bridgeSize(int replica) {
    return bridges.size(replica);
  }

  // ---------------------------------------------------------------- memory budget

  /** Estimated bytes the index holds (see {@link IndexBudget#estimate}). */
  public long estimatedBytes() {
    return eviction.estimatedBytes();
  }

  /** (replica, block) holdings the bridges map, over all replicas. */
  public long holdings() {
    return bridges.holdings();
  }

  /** Holdings the budget evicted from {@code replica} since it was last cleared. */
  public long evicted(int replica) {
    checkReplica(replica);
    return eviction.evicted(replica);
  }

  /** Holdings the budget evicted, over all replicas, ever. */
  public long evictedHoldings() {
    return eviction.evictedTotal();
  }
}

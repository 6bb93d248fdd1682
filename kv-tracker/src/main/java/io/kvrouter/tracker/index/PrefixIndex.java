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
 * 18 ns per block on a 1M-block tree (memory latency, partly overlapped).
 *
 * <p>Not thread-safe: one owner (the {@code KvTracker} actor, or a single-threaded lab).
 */
public final class PrefixIndex {

  /*
   * Implementation notes.
   *
   * Nodes live in one open-addressing table (linear probing, backward-shift deletion, capacity
   * grows 1.5x) stored as one interleaved long[]: table[2s] is the router key of slot s (0 = empty,
   * router keys are never 0) and table[2s+1] its holder word, so a lookup that finds its key has
   * the holders in the same cache line. The holder word packs up to four entries of 16 bits:
   *     bits 0-3  tier mask (GPU=1, CPU=2, DISK=4; 8 is unused here and marks predicted blocks
   *               in MatchResult), 0 = empty entry
   *     bits 4-14 replica index (hence MAX_REPLICAS = 2048); bit 15 always 0
   * so an inline word is never negative. A block held by more than four replicas (a shared system
   * prompt) moves to an overflow char[]: holder word = Long.MIN_VALUE | overflowId and
   * overflow[id][0] is the entry count, entries follow.
   *
   * Parent links are not stored. Dynamo's RadixTree keeps children per node (ai-dynamo/dynamo
   * lib/kv-router/README.md) because it navigates by local block hash; with chained keys the
   * prompt itself supplies the path, which is what llm-d's kvblock index does as well (a map from
   * chained request key to pods). Dropping the parent saves 8 bytes per block.
   *
   * Mutations decode a node's holders into a scratch array, edit it, and encode it back: a node
   * has few holders, and this keeps one code path for inline and overflow words.
   *
   * match() is bound by memory latency (one cache miss per block on a table of tens of MB), so it
   * walks the prompt in chunks: it first touches the home slot of every key of the chunk, loads
   * that do not depend on each other and so overlap in the memory system, then probes for real.
   *
   * Runs of equal holders: consecutive prompt blocks usually have the very same holder word (a
   * replica's own history: one inline entry; a system prompt on every replica: equal overflow
   * lists). Once a block has extended its holders and no predicted run is in play, the following
   * blocks with an equal word only compare words; the run is applied to the holders in one step
   * when it ends (MatchResult.extendRun). This takes the per-holder work off the walk: with 64
   * replicas sharing a 64-block prefix it was 4,096 extend calls, now 64 plus 63 list comparisons.
   * A predicted run starting at a block, or any replica covered by one, ends the bulk walk, so the
   * per-block path decides wherever predictions could change the outcome.
   */

  /** Most replicas one index can tell apart. */
  public static final int MAX_REPLICAS = 2048;

  static final int GPU_BIT = 1;
  static final int CPU_BIT = 2;
  static final int DISK_BIT = 4;
  static final int PREDICTED_BIT = 8;
  static final int REAL_BITS = GPU_BIT | CPU_BIT | DISK_BIT;
  private static final int INLINE = 4;
  private static final double MAX_LOAD = 0.8;
  private static final long[] TIER_SALT = {
    0x243F6A8885A308D3L, 0x13198A2E03707344L, 0xA4093822299F31D0L
  };

  private static final int PREFETCH = 32;

  private long[] table;
  private int capacity;
  private int size;
  private long prefetchSink;
  private int threshold;

  private char[][] overflow = new char[16][];
  private int[] freeOverflow = new int[16];
  private int freeOverflowCount;
  private int overflowUsed;

  private final char[] scratch = new char[MAX_REPLICAS + 1];
  private final LongLongMap[] bridges = new LongLongMap[MAX_REPLICAS];
  private final long[] digestCount = new long[MAX_REPLICAS];
  private final long[] digestSum = new long[MAX_REPLICAS];
  private final PredictedRuns runs = new PredictedRuns();

  /** An empty index sized for {@code expectedBlocks} nodes before it first grows. */
  public PrefixIndex(int expectedBlocks) {
    allocate(Hashing.capacityFor(Math.max(16, expectedBlocks), MAX_LOAD));
  }

  public PrefixIndex() {
    this(1024);
  }

  private void allocate(int capacity) {
    this.capacity = capacity;
    table = new long[2 * capacity];
    threshold = (int) (capacity * MAX_LOAD);
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
    LongLongMap bridge = bridge(replica);
    int added = 0;
    for (int i = 0; i < blockKeys.length; i++) {
      long key = blockKeys[i];
      bridge.put(hashes[i], key, 0L);
      int old = update(key, replica, bit, 0);
      if ((old & bit) == 0) {
        digestAdd(replica, key, bit);
        added++;
      }
    }
    return added;
  }

  /** Applies a {@link BlocksRemoved} of {@code replica}; returns how many holdings it ended. */
  public int remove(int replica, BlocksRemoved event) {
    checkReplica(replica);
    LongLongMap bridge = bridges[replica];
    if (bridge == null) {
      return 0;
    }
    int bit = tierBit(event.tier());
    int removed = 0;
    for (long hash : event.engineHashes()) {
      long key = bridge.get(hash, 0L);
      if (key == 0L) {
        continue;
      }
      int old = update(key, replica, 0, bit);
      if ((old & bit) != 0) {
        digestRemove(replica, key, bit);
        removed++;
      }
      if ((old & REAL_BITS & ~bit) == 0) {
        bridge.remove(hash, 0L);
      }
    }
    return removed;
  }

  /** The replica holds no block in any tier (its predicted entries stay). */
  public void clearReplica(int replica) {
    checkReplica(replica);
    LongLongMap bridge = bridges[replica];
    if (bridge != null) {
      bridge.clear();
    }
    if (digestCount[replica] != 0) {
      int s = 0;
      while (s < capacity) {
        long key = table[2 * s];
        if (key != 0L
            && (updateAt(s, replica, 0, REAL_BITS) & REAL_BITS) != 0
            && table[2 * s] != key) {
          continue; // the slot was deleted and refilled by backward shift: look at it again
        }
        s++;
      }
    }
    digestCount[replica] = 0;
    digestSum[replica] = 0;
  }

  /** The replica left: forget its blocks, predicted entries, bridge and digest. */
  public void dropReplica(int replica) {
    clearReplica(replica);
    bridges[replica] = null;
    runs.dropReplica(replica);
  }

  private LongLongMap bridge(int replica) {
    LongLongMap bridge = bridges[replica];
    if (bridge == null) {
      bridge = new LongLongMap(1024);
      bridges[replica] = bridge;
    }
    return bridge;
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
    out.heldBlocks(digestCount);
    long[] t = table;
    int cap = capacity;
    long sink = 0;
    boolean anyRuns = runs.size() > 0;
    // A run of blocks with the same holders (a shared system prompt on every replica, a replica's
    // own long history) is walked without touching the result: its holders are applied once, in
    // bulk, when the run ends (see flushRun).
    long runWord = 0L;
    int runStart = 0;
    for (int chunk = 0; chunk < count; chunk += PREFETCH) {
      int end = Math.min(count, chunk + PREFETCH);
      for (int block = chunk; block < end; block++) {
        sink += t[2 * Hashing.slot(promptKeys[block], cap)];
      }
      for (int block = chunk; block < end; block++) {
        long key = promptKeys[block];
        PredictedRuns.Run starting = anyRuns ? runs.first(key) : null;
        int s = Hashing.slot(key, cap);
        long word = 0L;
        while (true) {
          long probe = t[2 * s];
          if (probe == key) {
            word = t[2 * s + 1];
            break;
          }
          if (probe == 0L) {
            break;
          }
          if (++s == cap) {
            s = 0;
          }
        }
        if (runWord != 0L) {
          if (word != 0L && starting == null && sameHolders(word, runWord)) {
            continue;
          }
          flushRun(runWord, runStart, block, out);
          runWord = 0L;
        }
        for (PredictedRuns.Run run = starting; run != null; run = run.next) {
          if (out.matched(run.replica) == block) {
            out.cover(run.replica, block + PredictedRuns.common(promptKeys, block, count, run));
          }
        }
        boolean any = false;
        if (word >= 0) {
          for (int e = 0; e < INLINE; e++) {
            int entry = (int) (word >>> (16 * e)) & 0xFFFF;
            if (entry != 0) {
              any |= out.extend(entry >>> 4, block, entry & 0xF);
            }
          }
        } else {
          char[] list = overflow[(int) word];
          for (int e = 1, n = list[0]; e <= n; e++) {
            int entry = list[e];
            any |= out.extend(entry >>> 4, block, entry & 0xF);
          }
        }
        if (any && !out.anyCovering()) {
          // The next blocks with these holders extend exactly the holders that just extended.
          runWord = word;
          runStart = block + 1;
        }
        if (anyRuns) {
          any |= out.extendCovered(block);
        }
        if (!any) {
          prefetchSink = sink;
          return;
        }
      }
    }
    if (runWord != 0L) {
      flushRun(runWord, runStart, count, out);
    }
    prefetchSink = sink;
  }

  /** True when two holder words list the same entries in the same order. */
  private boolean sameHolders(long word, long other) {
    if (word >= 0 || other >= 0) {
      return word == other;
    }
    char[] a = overflow[(int) word];
    char[] b = overflow[(int) other];
    return a == b || java.util.Arrays.equals(a, 0, a[0] + 1, b, 0, b[0] + 1);
  }

  /**
   * Applies blocks {@code [from, to)}, all held by the entries of {@code word} and covered by no
   * predicted run, to every holder that has matched up to {@code from}.
   */
  private void flushRun(long word, int from, int to, MatchResult out) {
    if (from >= to) {
      return;
    }
    if (word >= 0) {
      for (int e = 0; e < INLINE; e++) {
        int entry = (int) (word >>> (16 * e)) & 0xFFFF;
        if (entry != 0) {
          out.extendRun(entry >>> 4, from, to, entry & 0xF);
        }
      }
    } else {
      char[] list = overflow[(int) word];
      for (int e = 1, n = list[0]; e <= n; e++) {
        out.extendRun(list[e] >>> 4, from, to, list[e] & 0xF);
      }
    }
  }

  /** Tier bits {@code replica} holds {@code key} with by engine events (GPU=1, CPU=2, DISK=4). */
  int maskOf(long key, int replica) {
    int s = find(key);
    if (s < 0) {
      return 0;
    }
    int n = decode(table[2 * s + 1]);
    for (int i = 0; i < n; i++) {
      if (scratch[i] >>> 4 == replica) {
        return scratch[i] & 0xF;
      }
    }
    return 0;
  }

  /** True when {@code replica} holds {@code key} in {@code tier} by engine events. */
  public boolean holds(int replica, long key, Tier tier) {
    return (maskOf(key, replica) & tierBit(tier)) != 0;
  }

  /** The order-independent digest of what {@code replica} holds by engine events. */
  public ReplicaDigest digest(int replica) {
    checkReplica(replica);
    return new ReplicaDigest(digestCount[replica], digestSum[replica]);
  }

  /** Distinct blocks (nodes) in the index. */
  public int nodes() {
    return size;
  }

  /** Engine hashes the bridge of {@code replica} knows. */
  public int bridgeSize(int replica) {
    LongLongMap bridge = bridges[replica];
    return bridge == null ? 0 : bridge.size();
  }

  // ---------------------------------------------------------------- digests

  private void digestAdd(int replica, long key, int bits) {
    for (int t = 0; t < 3; t++) {
      if ((bits & (1 << t)) != 0) {
        digestCount[replica]++;
        digestSum[replica] += Hashing.mix64(key ^ TIER_SALT[t]);
      }
    }
  }

  private void digestRemove(int replica, long key, int bits) {
    for (int t = 0; t < 3; t++) {
      if ((bits & (1 << t)) != 0) {
        digestCount[replica]--;
        digestSum[replica] -= Hashing.mix64(key ^ TIER_SALT[t]);
      }
    }
  }

  // ---------------------------------------------------------------- node table

  private int find(long key) {
    long[] t = table;
    int cap = capacity;
    int s = Hashing.slot(key, cap);
    while (true) {
      long probe = t[2 * s];
      if (probe == key) {
        return s;
      }
      if (probe == 0L) {
        return -1;
      }
      if (++s == cap) {
        s = 0;
      }
    }
  }

  private int findOrInsert(long key) {
    if (size >= threshold) {
      rehash(Hashing.grow(capacity));
    }
    long[] t = table;
    int cap = capacity;
    int s = Hashing.slot(key, cap);
    while (true) {
      long probe = t[2 * s];
      if (probe == key) {
        return s;
      }
      if (probe == 0L) {
        t[2 * s] = key;
        t[2 * s + 1] = 0L;
        size++;
        return s;
      }
      if (++s == cap) {
        s = 0;
      }
    }
  }

  private void deleteSlot(int hole) {
    long[] t = table;
    int cap = capacity;
    int j = hole;
    while (true) {
      if (++j == cap) {
        j = 0;
      }
      long key = t[2 * j];
      if (key == 0L) {
        break;
      }
      int home = Hashing.slot(key, cap);
      if (Hashing.distance(home, j, cap) >= Hashing.distance(hole, j, cap)) {
        t[2 * hole] = key;
        t[2 * hole + 1] = t[2 * j + 1];
        hole = j;
      }
    }
    t[2 * hole] = 0L;
    t[2 * hole + 1] = 0L;
    size--;
  }

  private void rehash(int newCapacity) {
    long[] old = table;
    int oldCapacity = capacity;
    allocate(newCapacity);
    long[] t = table;
    int cap = capacity;
    for (int i = 0; i < oldCapacity; i++) {
      long key = old[2 * i];
      if (key != 0L) {
        int s = Hashing.slot(key, cap);
        while (t[2 * s] != 0L) {
          if (++s == cap) {
            s = 0;
          }
        }
        t[2 * s] = key;
        t[2 * s + 1] = old[2 * i + 1];
      }
    }
  }

  /**
   * Sets bits {@code set} and clears bits {@code clear} of {@code replica} at {@code key}, creating
   * or deleting the node as needed; returns the mask before.
   */
  private int update(long key, int replica, int set, int clear) {
    return update(key, replica, set, clear, 0);
  }

  /**
   * As {@link #update(long, int, int, int)}, but changes nothing if any bit of {@code unless} is
   * set.
   */
  private int update(long key, int replica, int set, int clear, int unless) {
    int s = set != 0 ? findOrInsert(key) : find(key);
    return s < 0 ? 0 : updateAt(s, replica, set, clear, unless);
  }

  private int updateAt(int s, int replica, int set, int clear) {
    return updateAt(s, replica, set, clear, 0);
  }

  /** {@link #update} on the node at slot {@code s}. */
  private int updateAt(int s, int replica, int set, int clear, int unless) {
    long word = table[2 * s + 1];
    int n = decode(word);
    int at = -1;
    for (int i = 0; i < n; i++) {
      if (scratch[i] >>> 4 == replica) {
        at = i;
        break;
      }
    }
    int old = at < 0 ? 0 : scratch[at] & 0xF;
    int now = (old & unless) != 0 ? old : (old | set) & ~clear;
    if (now == old) {
      if (n == 0) {
        deleteSlot(s);
      }
      return old;
    }
    char entry = (char) ((replica << 4) | now);
    if (at < 0) {
      scratch[n++] = entry;
    } else if (now != 0) {
      scratch[at] = entry;
    } else {
      scratch[at] = scratch[--n];
    }
    if (n == 0) {
      if (word < 0) {
        freeOverflow((int) word);
      }
      deleteSlot(s);
    } else {
      table[2 * s + 1] = encode(word, n);
    }
    return old;
  }

  /** Copies the entries of {@code word} into {@code scratch}; returns how many. */
  private int decode(long word) {
    if (word >= 0) {
      int n = 0;
      for (int e = 0; e < INLINE; e++) {
        char entry = (char) (word >>> (16 * e));
        if (entry != 0) {
          scratch[n++] = entry;
        }
      }
      return n;
    }
    char[] list = overflow[(int) word];
    int n = list[0];
    System.arraycopy(list, 1, scratch, 0, n);
    return n;
  }

  /** Encodes {@code scratch[0, n)} reusing the overflow array of {@code word} if it has one. */
  private long encode(long word, int n) {
    if (n <= INLINE) {
      if (word < 0) {
        freeOverflow((int) word);
      }
      long packed = 0L;
      for (int i = 0; i < n; i++) {
        packed |= ((long) scratch[i]) << (16 * i);
      }
      return packed;
    }
    int id = word < 0 ? (int) word : allocateOverflow();
    char[] list = overflow[id];
    if (list == null || list.length < n + 1) {
      list = new char[Math.min(MAX_REPLICAS + 1, Math.max(n + 1, 2 * n))];
      overflow[id] = list;
    }
    list[0] = (char) n;
    System.arraycopy(scratch, 0, list, 1, n);
    return Long.MIN_VALUE | id;
  }

  private int allocateOverflow() {
    if (freeOverflowCount > 0) {
      return freeOverflow[--freeOverflowCount];
    }
    if (overflowUsed == overflow.length) {
      overflow = java.util.Arrays.copyOf(overflow, overflow.length * 2);
    }
    return overflowUsed++;
  }

  private void freeOverflow(int id) {
    overflow[id] = null;
    if (freeOverflowCount == freeOverflow.length) {
      freeOverflow = java.util.Arrays.copyOf(freeOverflow, freeOverflow.length * 2);
    }
    freeOverflow[freeOverflowCount++] = id;
  }
}

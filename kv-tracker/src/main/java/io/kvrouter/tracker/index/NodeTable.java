package io.kvrouter.tracker.index;

import static io.kvrouter.tracker.index.PrefixIndex.GPU_BIT;
import static io.kvrouter.tracker.index.PrefixIndex.MAX_REPLICAS;
import static io.kvrouter.tracker.index.PrefixIndex.REAL_BITS;

import java.util.Arrays;

/**
 * The prefix index's nodes: one per distinct router key, each with the replicas that hold it and in
 * which tiers (a holder word).
 *
 * <p>Contract: {@link #update} sets and clears one replica's bits at a key, creating the node when
 * bits are set and deleting it when its last entry goes; {@link #find} gives a key's slot, -1 when
 * absent. Slots move on deletion (backward shift) and rehash: the {@link IndexBudget}, if any, is
 * told of every fill and move, and the {@link RunSummary} is resized with the table. The holder
 * word format is read directly by {@link PrefixMatcher} ({@link #table}, {@link #overflow}), which
 * must not mutate them except through {@link #markClaimed}.
 *
 * <p>Cost: expected O(1) per lookup and update plus O(holders) per update; 16 bytes per slot at
 * load 0.53 to 0.8; a node with more than four holders adds an overflow array of 2 bytes per
 * holder.
 *
 * <p>Not thread-safe: owned by one {@link PrefixIndex}.
 */
final class NodeTable {

  /*
   * Implementation notes.
   *
   * Nodes live in one open-addressing table (linear probing, backward-shift deletion, capacity
   * grows 1.5x) stored as one interleaved long[]: table[2s] is the router key of slot s (0 = empty,
   * router keys are never 0) and table[2s+1] its holder word, so a lookup that finds its key has
   * the holders in the same cache line. The holder word packs up to four entries of 16 bits:
   *     bits 0-2  tier mask (GPU=1, CPU=2, DISK=4), never 0 in an entry
   *     bit 3     CLAIMED: the block is in a run the RunSummary may hold a claim of this replica
   *               on (so losing it on GPU must be told to the summary); 8 marks predicted blocks
   *               in MatchResult, where table entries' bit 3 never goes
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
   */

  static final int CLAIMED = 8;
  static final int INLINE = 4;
  static final double MAX_LOAD = 0.8;

  long[] table;
  int capacity;
  char[][] overflow = new char[16][];
  private int size;
  private int threshold;
  private int[] freeOverflow = new int[16];
  private int freeOverflowCount;
  private int overflowUsed;

  /** Entries of the last {@link #decode}. */
  final char[] scratch = new char[MAX_REPLICAS + 1];

  private final RunSummary summary;
  private final IndexBudget budget; // null: no memory budget

  NodeTable(int capacity, RunSummary summary, IndexBudget budget) {
    this.summary = summary;
    this.budget = budget;
    allocate(capacity);
  }

  private void allocate(int capacity) {
    this.capacity = capacity;
    table = new long[2 * capacity];
    threshold = (int) (capacity * MAX_LOAD);
    summary.sizeFor(capacity);
  }

  /** Distinct keys (nodes). */
  int size() {
    return size;
  }

  int find(long key) {
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
        if (budget != null) {
          budget.stored(s);
        }
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
        if (budget != null) {
          budget.moved(j, hole);
        }
        hole = j;
      }
    }
    t[2 * hole] = 0L;
    t[2 * hole + 1] = 0L;
    size--;
  }

  /**
   * Removes the node at slot {@code s} with all its entries (the slot may be refilled by a move).
   */
  void removeAt(int s) {
    long word = table[2 * s + 1];
    if (word < 0) {
      freeOverflow((int) word);
    }
    deleteSlot(s);
  }

  private void rehash(int newCapacity) {
    long[] old = table;
    int oldCapacity = capacity;
    allocate(newCapacity);
    if (budget != null) {
      budget.resized(newCapacity);
    }
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
        if (budget != null) {
          budget.carried(i, s);
        }
      }
    }
    if (budget != null) {
      budget.rehashed();
    }
  }

  /**
   * Sets bits {@code set} and clears bits {@code clear} of {@code replica} at {@code key}, creating
   * or deleting the node as needed; returns the mask before.
   */
  int update(long key, int replica, int set, int clear) {
    int s = set != 0 ? findOrInsert(key) : find(key);
    return s < 0 ? 0 : updateAt(s, replica, set, clear);
  }

  /** {@link #update} on the node at slot {@code s}. */
  int updateAt(int s, int replica, int set, int clear) {
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
    int now = (old | set) & ~clear;
    if ((now & GPU_BIT) == 0) {
      now = now & REAL_BITS; // a block off GPU is in no claim; nothing real, no entry
    }
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

  /** Clears every tier bit of {@code replica} in every node: a scan of the whole table. */
  void clearReplica(int replica) {
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

  /** Tier bits {@code replica} holds {@code key} with by engine events (GPU=1, CPU=2, DISK=4). */
  int maskOf(long key, int replica) {
    int s = find(key);
    if (s < 0) {
      return 0;
    }
    int n = decode(table[2 * s + 1]);
    for (int i = 0; i < n; i++) {
      if (scratch[i] >>> 4 == replica) {
        return scratch[i] & REAL_BITS;
      }
    }
    return 0;
  }

  /**
   * Flags the entry of {@code replica} at node slot {@code s}: losing that block on GPU is then
   * told to the run summary (removals of blocks in no claimed run skip it).
   */
  void markClaimed(int s, int replica) {
    long word = table[2 * s + 1];
    if (word >= 0) {
      for (int e = 0; e < INLINE; e++) {
        int entry = (int) (word >>> (16 * e)) & 0xFFFF;
        if (entry != 0 && entry >>> 4 == replica) {
          table[2 * s + 1] = word | ((long) CLAIMED << (16 * e));
          return;
        }
      }
    } else {
      char[] list = overflow[(int) word];
      for (int e = 1, n = list[0]; e <= n; e++) {
        if (list[e] >>> 4 == replica) {
          list[e] |= CLAIMED;
          return;
        }
      }
    }
  }

  /** True when two holder words list the same entries in the same order. */
  boolean sameHolders(long word, long other) {
    if (word >= 0 || other >= 0) {
      return word == other;
    }
    char[] a = overflow[(int) word];
    char[] b = overflow[(int) other];
    return a == b || Arrays.equals(a, 0, a[0] + 1, b, 0, b[0] + 1);
  }

  /** Copies the entries of {@code word} into {@link #scratch}; returns how many. */
  int decode(long word) {
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
      overflow = Arrays.copyOf(overflow, overflow.length * 2);
    }
    return overflowUsed++;
  }

  private void freeOverflow(int id) {
    overflow[id] = null;
    if (freeOverflowCount == freeOverflow.length) {
      freeOverflow = Arrays.copyOf(freeOverflow, freeOverflow.length * 2);
    }
    freeOverflow[freeOverflowCount++] = id;
  }
}

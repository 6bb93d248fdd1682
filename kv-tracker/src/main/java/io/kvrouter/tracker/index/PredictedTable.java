package io.kvrouter.tracker.index;

/**
 * Deadlines of predicted entries: (router key, replica) to the latest time until which that
 * replica is predicted to hold the block.
 *
 * <p>Contract: {@link #putMax} keeps the later of two deadlines, so overlapping reservations for
 * the same blocks never shorten each other. Deadlines are milliseconds in {@code [0, 2^52)}.
 * Not thread-safe. Cost: expected O(1) per operation; 16 bytes per slot.
 *
 * <p>Implementation notes: linear probing with backward-shift deletion, as {@link LongLongMap},
 * over one interleaved {@code long[]}: {@code table[2s]} is the key (0, never a router key, marks
 * an empty slot) and {@code table[2s+1]} packs {@code deadline << 11 | replica}, so a probe touches
 * one cache line. Only blocks a router predicted live here, so the table stays small next to the
 * index.
 */
final class PredictedTable {

  static final long NONE = Long.MIN_VALUE;
  private static final double MAX_LOAD = 0.75;
  private static final int REPLICA_BITS = 11;
  private static final long REPLICA_MASK = (1L << REPLICA_BITS) - 1;
  private static final long MAX_DEADLINE = (1L << 52) - 1;

  private long[] table;
  private int capacity;
  private int size;
  private int threshold;

  PredictedTable(int expected) {
    allocate(Hashing.capacityFor(expected, MAX_LOAD));
  }

  private void allocate(int newCapacity) {
    capacity = newCapacity;
    table = new long[2 * newCapacity];
    threshold = (int) (newCapacity * MAX_LOAD);
  }

  private static long pairHash(long key, int replica) {
    return key ^ (replica * 0xC2B2AE3D27D4EB4FL);
  }

  private static long pack(long deadline, int replica) {
    return Math.min(Math.max(deadline, 0L), MAX_DEADLINE) << REPLICA_BITS | replica;
  }

  int size() {
    return size;
  }

  private int find(long key, int replica) {
    long[] t = table;
    int cap = capacity;
    int i = Hashing.slot(pairHash(key, replica), cap);
    while (true) {
      long probe = t[2 * i];
      if (probe == 0L) {
        return -1;
      }
      if (probe == key && (t[2 * i + 1] & REPLICA_MASK) == replica) {
        return i;
      }
      if (++i == cap) {
        i = 0;
      }
    }
  }

  /** Reads the home slot of (key, replica), so that a later probe finds it in cache. */
  long touch(long key, int replica) {
    return table[2 * Hashing.slot(pairHash(key, replica), capacity)];
  }

  long get(long key, int replica) {
    int i = find(key, replica);
    return i < 0 ? NONE : table[2 * i + 1] >>> REPLICA_BITS;
  }

  void putMax(long key, int replica, long deadline) {
    if (size >= threshold) {
      rehash(Hashing.grow(capacity));
    }
    long[] t = table;
    int cap = capacity;
    long packed = pack(deadline, replica);
    int i = Hashing.slot(pairHash(key, replica), cap);
    while (true) {
      long probe = t[2 * i];
      if (probe == 0L) {
        t[2 * i] = key;
        t[2 * i + 1] = packed;
        size++;
        return;
      }
      if (probe == key && (t[2 * i + 1] & REPLICA_MASK) == replica) {
        t[2 * i + 1] = Math.max(t[2 * i + 1], packed);
        return;
      }
      if (++i == cap) {
        i = 0;
      }
    }
  }

  /** Removes (key, replica) if its deadline is at or before {@code nowMillis}; true if removed. */
  boolean removeIfDue(long key, int replica, long nowMillis) {
    int i = find(key, replica);
    if (i < 0 || (table[2 * i + 1] >>> REPLICA_BITS) > nowMillis) {
      return false;
    }
    removeAt(i);
    return true;
  }

  boolean remove(long key, int replica) {
    int i = find(key, replica);
    if (i < 0) {
      return false;
    }
    removeAt(i);
    return true;
  }

  private void removeAt(int hole) {
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
      int home = Hashing.slot(pairHash(key, (int) (t[2 * j + 1] & REPLICA_MASK)), cap);
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

  /** Removes every entry of {@code replica}, handing each key to {@code onRemoved}. O(capacity). */
  void removeReplica(int replica, java.util.function.LongConsumer onRemoved) {
    long[] doomed = new long[size];
    int n = 0;
    for (int i = 0; i < capacity; i++) {
      if (table[2 * i] != 0L && (table[2 * i + 1] & REPLICA_MASK) == replica) {
        doomed[n++] = table[2 * i];
      }
    }
    for (int i = 0; i < n; i++) {
      remove(doomed[i], replica);
      onRemoved.accept(doomed[i]);
    }
  }

  private void rehash(int newCapacity) {
    long[] old = table;
    int oldCapacity = capacity;
    allocate(newCapacity);
    size = 0;
    for (int i = 0; i < oldCapacity; i++) {
      if (old[2 * i] != 0L) {
        putMax(old[2 * i], (int) (old[2 * i + 1] & REPLICA_MASK), old[2 * i + 1] >>> REPLICA_BITS);
      }
    }
  }
}

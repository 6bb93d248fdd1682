package io.kvrouter.tracker.index;

/**
 * Deadlines of predicted entries: (router key, replica) to the latest time until which that
 * replica is predicted to hold the block.
 *
 * <p>Contract: {@link #putMax} keeps the later of two deadlines, so overlapping reservations for
 * the same blocks never shorten each other. Not thread-safe. Cost: expected O(1) per operation;
 * 20 bytes per slot.
 *
 * <p>Implementation notes: linear probing over parallel arrays with backward-shift deletion, as
 * {@link LongLongMap}; key 0 (never a router key) marks an empty slot. Only blocks a router
 * predicted live here, so the table stays small next to the index.
 */
final class PredictedTable {

  static final long NONE = Long.MIN_VALUE;
  private static final double MAX_LOAD = 0.75;

  private long[] keys;
  private int[] replicas;
  private long[] deadlines;
  private int size;
  private int threshold;

  PredictedTable(int expected) {
    allocate(Hashing.capacityFor(expected, MAX_LOAD));
  }

  private void allocate(int capacity) {
    keys = new long[capacity];
    replicas = new int[capacity];
    deadlines = new long[capacity];
    threshold = (int) (capacity * MAX_LOAD);
  }

  private static long pairHash(long key, int replica) {
    return key ^ (replica * 0xC2B2AE3D27D4EB4FL);
  }

  int size() {
    return size;
  }

  private int find(long key, int replica) {
    int cap = keys.length;
    int i = Hashing.slot(pairHash(key, replica), cap);
    while (true) {
      long probe = keys[i];
      if (probe == 0L) {
        return -1;
      }
      if (probe == key && replicas[i] == replica) {
        return i;
      }
      if (++i == cap) {
        i = 0;
      }
    }
  }

  long get(long key, int replica) {
    int i = find(key, replica);
    return i < 0 ? NONE : deadlines[i];
  }

  void putMax(long key, int replica, long deadline) {
    if (size >= threshold) {
      rehash(Hashing.grow(keys.length));
    }
    int cap = keys.length;
    int i = Hashing.slot(pairHash(key, replica), cap);
    while (true) {
      long probe = keys[i];
      if (probe == 0L) {
        keys[i] = key;
        replicas[i] = replica;
        deadlines[i] = deadline;
        size++;
        return;
      }
      if (probe == key && replicas[i] == replica) {
        deadlines[i] = Math.max(deadlines[i], deadline);
        return;
      }
      if (++i == cap) {
        i = 0;
      }
    }
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
    int cap = keys.length;
    int j = hole;
    while (true) {
      if (++j == cap) {
        j = 0;
      }
      long key = keys[j];
      if (key == 0L) {
        break;
      }
      int home = Hashing.slot(pairHash(key, replicas[j]), cap);
      if (Hashing.distance(home, j, cap) >= Hashing.distance(hole, j, cap)) {
        keys[hole] = key;
        replicas[hole] = replicas[j];
        deadlines[hole] = deadlines[j];
        hole = j;
      }
    }
    keys[hole] = 0L;
    size--;
  }

  /** Removes every entry of {@code replica}, handing each key to {@code onRemoved}. O(capacity). */
  void removeReplica(int replica, java.util.function.LongConsumer onRemoved) {
    long[] doomed = new long[size];
    int n = 0;
    for (int i = 0; i < keys.length; i++) {
      if (keys[i] != 0L && replicas[i] == replica) {
        doomed[n++] = keys[i];
      }
    }
    for (int i = 0; i < n; i++) {
      remove(doomed[i], replica);
      onRemoved.accept(doomed[i]);
    }
  }

  private void rehash(int capacity) {
    long[] oldKeys = keys;
    int[] oldReplicas = replicas;
    long[] oldDeadlines = deadlines;
    allocate(capacity);
    size = 0;
    for (int i = 0; i < oldKeys.length; i++) {
      if (oldKeys[i] != 0L) {
        putMax(oldKeys[i], oldReplicas[i], oldDeadlines[i]);
      }
    }
  }
}

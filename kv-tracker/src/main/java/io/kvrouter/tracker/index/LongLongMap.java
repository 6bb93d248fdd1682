package io.kvrouter.tracker.index;

/**
 * A map from {@code long} to {@code long} without boxing, for the per-replica bridge from engine
 * block hashes to router keys (and the block reference counts of baseline policies).
 *
 * <p>Contract: every {@code long} is a valid key (engine hashes may be 0); {@code get} returns the
 * caller's {@code missing} value for absent keys. Not thread-safe.
 *
 * <p>Cost: expected O(1) per operation, no allocation except when growing; 16 bytes per slot, load
 * between 0.53 and 0.8, so 20 to 30 bytes per entry.
 *
 * <p>Implementation notes: linear probing over parallel {@code long[]} arrays with backward-shift
 * deletion (Knuth, TAOCP vol. 3, algorithm R), so there are no tombstones and lookups stay short
 * after many removals. Key 0 marks an empty slot, so a real key 0 lives in a side field.
 */
public final class LongLongMap {

  private static final double MAX_LOAD = 0.8;

  private long[] keys;
  private long[] values;
  private int size;
  private int threshold;
  private boolean hasZero;
  private long zeroValue;

  public LongLongMap(int expected) {
    allocate(Hashing.capacityFor(expected, MAX_LOAD));
  }

  private void allocate(int capacity) {
    keys = new long[capacity];
    values = new long[capacity];
    threshold = (int) (capacity * MAX_LOAD);
  }

  public int size() {
    return size + (hasZero ? 1 : 0);
  }

  public long get(long key, long missing) {
    if (key == 0L) {
      return hasZero ? zeroValue : missing;
    }
    long[] k = keys;
    int cap = k.length;
    int i = Hashing.slot(key, cap);
    while (true) {
      long probe = k[i];
      if (probe == key) {
        return values[i];
      }
      if (probe == 0L) {
        return missing;
      }
      if (++i == cap) {
        i = 0;
      }
    }
  }

  /** Puts and returns the previous value, or {@code missing}. */
  public long put(long key, long value, long missing) {
    if (key == 0L) {
      long prev = hasZero ? zeroValue : missing;
      hasZero = true;
      zeroValue = value;
      return prev;
    }
    if (size >= threshold) {
      rehash(Hashing.grow(keys.length));
    }
    long[] k = keys;
    int cap = k.length;
    int i = Hashing.slot(key, cap);
    while (true) {
      long probe = k[i];
      if (probe == key) {
        long prev = values[i];
        values[i] = value;
        return prev;
      }
      if (probe == 0L) {
        k[i] = key;
        values[i] = value;
        size++;
        return missing;
      }
      if (++i == cap) {
        i = 0;
      }
    }
  }

  /** Removes and returns the value, or {@code missing}. */
  public long remove(long key, long missing) {
    if (key == 0L) {
      long prev = hasZero ? zeroValue : missing;
      hasZero = false;
      return prev;
    }
    long[] k = keys;
    int cap = k.length;
    int i = Hashing.slot(key, cap);
    while (true) {
      long probe = k[i];
      if (probe == key) {
        long prev = values[i];
        shiftBack(i);
        size--;
        return prev;
      }
      if (probe == 0L) {
        return missing;
      }
      if (++i == cap) {
        i = 0;
      }
    }
  }

  private void shiftBack(int hole) {
    long[] k = keys;
    int cap = k.length;
    int j = hole;
    while (true) {
      if (++j == cap) {
        j = 0;
      }
      long key = k[j];
      if (key == 0L) {
        break;
      }
      int home = Hashing.slot(key, cap);
      if (Hashing.distance(home, j, cap) >= Hashing.distance(hole, j, cap)) {
        k[hole] = key;
        values[hole] = values[j];
        hole = j;
      }
    }
    k[hole] = 0L;
    values[hole] = 0L;
  }

  private void rehash(int capacity) {
    long[] oldKeys = keys;
    long[] oldValues = values;
    allocate(capacity);
    size = 0;
    for (int i = 0; i < oldKeys.length; i++) {
      if (oldKeys[i] != 0L) {
        put(oldKeys[i], oldValues[i], 0L);
      }
    }
  }

  /** Visits every entry; the visitor must not modify this map. */
  void forEach(Visitor visitor) {
    if (hasZero) {
      visitor.visit(0L, zeroValue);
    }
    long[] k = keys;
    for (int i = 0; i < k.length; i++) {
      if (k[i] != 0L) {
        visitor.visit(k[i], values[i]);
      }
    }
  }

  void clear() {
    java.util.Arrays.fill(keys, 0L);
    java.util.Arrays.fill(values, 0L);
    size = 0;
    hasZero = false;
  }

  /** Heap bytes held by the arrays (for memory reports). */
  long arrayBytes() {
    return 16L * keys.length;
  }

  @FunctionalInterface
  interface Visitor {
    void visit(long key, long value);
  }
}

package io.kvrouter.loadtest.lab;

import java.util.Arrays;

/**
 * A map from non-zero {@code long} keys to {@code int} values, for the lab's hot paths (an engine's
 * cached blocks, the single-cache bound).
 *
 * <p>Contract: keys must not be 0 (0 marks an empty slot; router block keys are never 0). {@link
 * #get} returns {@link #MISSING} for an absent key.
 *
 * <p>Cost: expected O(1) per operation; 12 bytes per slot at a load between 0.33 and 0.67 (18 to 36
 * bytes per entry). No allocation except when growing. Not thread-safe.
 *
 * <p>Implementation notes: open addressing with linear probing and backward-shift deletion (Knuth,
 * TAOCP vol. 3, 6.4, Algorithm R), so no tombstones; the slot is the top bits of a Fibonacci hash
 * of the key (Knuth, 6.4, multiplicative hashing).
 */
final class LongIntMap {

  static final int MISSING = Integer.MIN_VALUE;

  private long[] keys;
  private int[] values;
  private int mask;
  private int shift;
  private int size;

  LongIntMap(int expected) {
    int cap = Integer.highestOneBit(Math.max(16, expected * 2 - 1)) << 1;
    keys = new long[cap];
    values = new int[cap];
    mask = cap - 1;
    shift = 64 - Integer.numberOfTrailingZeros(cap);
  }

  int size() {
    return size;
  }

  private int slot(long key) {
    return (int) ((key * 0x9E3779B97F4A7C15L) >>> shift);
  }

  int get(long key) {
    for (int i = slot(key); ; i = (i + 1) & mask) {
      long k = keys[i];
      if (k == key) {
        return values[i];
      }
      if (k == 0) {
        return MISSING;
      }
    }
  }

  boolean containsKey(long key) {
    return get(key) != MISSING;
  }

  /** Puts or replaces; returns the previous value or {@link #MISSING}. */
  int put(long key, int value) {
    if (key == 0) {
      throw new IllegalArgumentException("key 0 is reserved");
    }
    for (int i = slot(key); ; i = (i + 1) & mask) {
      long k = keys[i];
      if (k == key) {
        int old = values[i];
        values[i] = value;
        return old;
      }
      if (k == 0) {
        keys[i] = key;
        values[i] = value;
        if (++size * 3 > keys.length * 2) {
          grow();
        }
        return MISSING;
      }
    }
  }

  /**
   * Puts {@code value} unless the key is present; returns the present value, or {@link #MISSING}
   * when it inserted. One probe sequence.
   */
  int putIfAbsent(long key, int value) {
    if (key == 0) {
      throw new IllegalArgumentException("key 0 is reserved");
    }
    for (int i = slot(key); ; i = (i + 1) & mask) {
      long k = keys[i];
      if (k == key) {
        return values[i];
      }
      if (k == 0) {
        keys[i] = key;
        values[i] = value;
        if (++size * 3 > keys.length * 2) {
          grow();
        }
        return MISSING;
      }
    }
  }

  /** Removes a key; returns its value or {@link #MISSING}. */
  int remove(long key) {
    int i = slot(key);
    while (true) {
      long k = keys[i];
      if (k == 0) {
        return MISSING;
      }
      if (k == key) {
        break;
      }
      i = (i + 1) & mask;
    }
    int old = values[i];
    size--;
    int gap = i;
    for (int j = (gap + 1) & mask; keys[j] != 0; j = (j + 1) & mask) {
      int home = slot(keys[j]);
      // move j into the gap when its home is not in (gap, j] cyclically
      boolean movable = gap <= j ? (home <= gap || home > j) : (home <= gap && home > j);
      if (movable) {
        keys[gap] = keys[j];
        values[gap] = values[j];
        gap = j;
      }
    }
    keys[gap] = 0;
    return old;
  }

  private void grow() {
    long[] oldKeys = keys;
    int[] oldValues = values;
    keys = new long[oldKeys.length * 2];
    values = new int[oldKeys.length * 2];
    mask = keys.length - 1;
    shift = 64 - Integer.numberOfTrailingZeros(keys.length);
    size = 0;
    for (int i = 0; i < oldKeys.length; i++) {
      if (oldKeys[i] != 0) {
        put(oldKeys[i], oldValues[i]);
      }
    }
  }

  void clear() {
    Arrays.fill(keys, 0);
    size = 0;
  }
}

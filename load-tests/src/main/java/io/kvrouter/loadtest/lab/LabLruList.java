package io.kvrouter.loadtest.lab;

import java.util.Arrays;

/**
 * Entries holding one block key each, in a doubly linked least-recently-used list, stored in
 * parallel arrays that grow by doubling, with released entries reused first: the list the lab's GPU
 * cache ({@link LabKvCache}, its free cached blocks) and CPU tier ({@link LabCpuTier}) evict from.
 * An entry is in the list only between {@link #append} and {@link #unlink}.
 *
 * <p>Cost: O(1) per operation (amortised on growth); 20 bytes per entry. Not thread-safe.
 */
final class LabLruList {

  private long[] keyOf = new long[1 << 12];
  private int[] prev = new int[1 << 12];
  private int[] next = new int[1 << 12];
  private int entries;
  private int[] freeEntries = new int[64];
  private int freeEntryCount;
  private int head = -1;
  private int tail = -1;

  /** The entry the next {@link #newEntry} returns. */
  int nextEntry() {
    return freeEntryCount > 0 ? freeEntries[freeEntryCount - 1] : entries;
  }

  /** A new entry for {@code key}, not in the list. */
  int newEntry(long key) {
    int e;
    if (freeEntryCount > 0) {
      e = freeEntries[--freeEntryCount];
    } else {
      if (entries == keyOf.length) {
        int n = keyOf.length * 2;
        keyOf = Arrays.copyOf(keyOf, n);
        prev = Arrays.copyOf(prev, n);
        next = Arrays.copyOf(next, n);
      }
      e = entries++;
    }
    keyOf[e] = key;
    prev[e] = -1;
    next[e] = -1;
    return e;
  }

  /** Entries that exist without growing: an upper bound of every entry index so far, plus one. */
  int capacity() {
    return keyOf.length;
  }

  /** Gives an entry back (its key stays readable until it is reused). */
  void release(int e) {
    if (freeEntryCount == freeEntries.length) {
      freeEntries = Arrays.copyOf(freeEntries, freeEntryCount * 2);
    }
    freeEntries[freeEntryCount++] = e;
  }

  long key(int e) {
    return keyOf[e];
  }

  /** The least recently appended entry in the list, or -1. */
  int head() {
    return head;
  }

  /** Makes {@code e} the most recent. */
  void append(int e) {
    prev[e] = tail;
    next[e] = -1;
    if (tail >= 0) {
      next[tail] = e;
    } else {
      head = e;
    }
    tail = e;
  }

  void unlink(int e) {
    if (prev[e] >= 0) {
      next[prev[e]] = next[e];
    } else {
      head = next[e];
    }
    if (next[e] >= 0) {
      prev[next[e]] = prev[e];
    } else {
      tail = prev[e];
    }
    prev[e] = -1;
    next[e] = -1;
  }
}

package io.kvrouter.loadtest.lab;

/**
 * A set of at most {@code capacity} block keys evicting the least recently used, the pooled cache
 * behind {@link SingleCacheBound#pooledTokenRate}. {@link #admit} touches a prompt's keys from last
 * to first, so its leading blocks are the most recent and, among one prompt's blocks, the tail goes
 * first, as vLLM's prefix cache evicts (vLLM docs, design: automatic prefix caching).
 *
 * <p>Cost: O(1) expected per key, on primitive arrays ({@link LongIntMap}, {@link LabLruList});
 * about 50 bytes per held key. Not thread-safe.
 */
final class PooledLruCache {

  private final long capacity;
  private final LongIntMap entryOf = new LongIntMap(1 << 16);
  private final LabLruList lru = new LabLruList();

  /**
   * @param capacity keys held at most, at least 1
   */
  PooledLruCache(long capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be at least 1, was " + capacity);
    }
    this.capacity = capacity;
  }

  /** The number of leading {@code keys} held; changes nothing. */
  int leadingMatch(long[] keys) {
    int n = 0;
    while (n < keys.length && entryOf.containsKey(keys[n])) {
      n++;
    }
    return n;
  }

  /** Makes every key of {@code keys} held and recent, then evicts down to the capacity. */
  void admit(long[] keys) {
    for (int i = keys.length - 1; i >= 0; i--) {
      int e = entryOf.get(keys[i]);
      if (e == LongIntMap.MISSING) {
        e = lru.newEntry(keys[i]);
        entryOf.put(keys[i], e);
      } else {
        lru.unlink(e);
      }
      lru.append(e);
    }
    while (entryOf.size() > capacity) {
      int oldest = lru.head();
      lru.unlink(oldest);
      entryOf.remove(lru.key(oldest));
      lru.release(oldest);
    }
  }
}

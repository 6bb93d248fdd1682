package io.kvrouter.loadtest.workload;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The set of chained block ids one replica's prefix cache holds, unlimited or bounded with LRU
 * eviction.
 *
 * <p>Contract: {@link #leadingMatch} counts the leading ids held, without touching recency. {@link
 * #insert} makes a request's ids the most recently used, touching them from last to first so that
 * the request's leading blocks are the most recent: when the set overflows, the tail of a prefix
 * goes before its head, as vLLM's automatic prefix caching prefers to evict "the block at the end
 * of the longest prefix" among equally old blocks (vLLM docs, design: automatic prefix caching).
 *
 * <p>Cost: O(1) expected per id; ~60 bytes per held id unbounded (boxed {@code HashSet}), ~80
 * bounded ({@code LinkedHashMap} in access order). Not thread-safe.
 */
final class ReplicaBlockSet {

  private final int capacity;
  private final Set<Long> unbounded;
  private final LinkedHashMap<Long, Boolean> lru;

  /**
   * @param capacity maximum ids held, or 0 for unlimited
   */
  ReplicaBlockSet(int capacity) {
    if (capacity < 0) {
      throw new IllegalArgumentException("capacity must be >= 0 (0 = unlimited), got " + capacity);
    }
    this.capacity = capacity;
    if (capacity == 0) {
      this.unbounded = new HashSet<>();
      this.lru = null;
    } else {
      this.unbounded = null;
      this.lru =
          new LinkedHashMap<>(Math.min(capacity, 1 << 16), 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
              return size() > ReplicaBlockSet.this.capacity;
            }
          };
    }
  }

  int leadingMatch(long[] ids) {
    int n = 0;
    while (n < ids.length && contains(ids[n])) {
      n++;
    }
    return n;
  }

  void insert(long[] ids) {
    for (int i = ids.length - 1; i >= 0; i--) {
      if (unbounded != null) {
        unbounded.add(ids[i]);
      } else {
        lru.put(ids[i], Boolean.TRUE);
      }
    }
  }

  boolean contains(long id) {
    return unbounded != null ? unbounded.contains(id) : lru.containsKey(id);
  }

  int size() {
    return unbounded != null ? unbounded.size() : lru.size();
  }
}

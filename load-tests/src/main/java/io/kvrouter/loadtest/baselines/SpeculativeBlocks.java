package io.kvrouter.loadtest.baselines;

import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A router's own guesses of which blocks a replica is about to cache, each good for a fixed time
 * after it was written: the speculative entries of vllm-project/router's KV block index ({@code
 * KVBlockIndex::speculative_insert} and {@code BlockLocation::is_expired} in {@code
 * src/kv_index/index.rs} at 2ec0ff0c). An entry written again is renewed; an entry older than the
 * TTL is invisible and dropped on the next {@link #expire}.
 *
 * <p>Cost: {@link #holds} is one hash lookup; {@link #insert} one removal and one insertion per
 * key; {@link #expire} removes expired entries from the oldest end, amortised O(1) per entry ever
 * written. About 100 bytes per live entry (a boxed key and expiry in a linked hash map).
 */
final class SpeculativeBlocks {

  /*
   * Implementation notes: one LinkedHashMap per replica from block key to expiry time. Every
   * entry gets the same TTL, so insertion order is expiry order once a renewed key is removed
   * before it is put back; expiring walks from the head and stops at the first live entry.
   */

  private final long ttlMillis;
  private final Map<Integer, LinkedHashMap<Long, Long>> byReplica = new HashMap<>();

  SpeculativeBlocks(long ttlMillis) {
    if (ttlMillis <= 0) {
      throw new IllegalArgumentException("ttlMillis must be > 0, was " + ttlMillis);
    }
    this.ttlMillis = ttlMillis;
  }

  /** Writes {@code keys[from, to)} for {@code replica} at {@code nowMillis}, renewing old ones. */
  void insert(int replica, long[] keys, int from, int to, long nowMillis) {
    LinkedHashMap<Long, Long> entries =
        byReplica.computeIfAbsent(replica, r -> new LinkedHashMap<>());
    long expiry = nowMillis + ttlMillis;
    for (int i = from; i < to; i++) {
      entries.remove(keys[i]);
      entries.put(keys[i], expiry);
    }
  }

  /** Whether {@code replica} has a live entry for {@code key} at {@code nowMillis}. */
  boolean holds(int replica, long key, long nowMillis) {
    LinkedHashMap<Long, Long> entries = byReplica.get(replica);
    if (entries == null) {
      return false;
    }
    Long expiry = entries.get(key);
    return expiry != null && nowMillis <= expiry;
  }

  /** Drops the entries that expired before {@code nowMillis}. */
  void expire(long nowMillis) {
    for (LinkedHashMap<Long, Long> entries : byReplica.values()) {
      Iterator<Long> oldest = entries.values().iterator();
      while (oldest.hasNext() && oldest.next() < nowMillis) {
        oldest.remove();
      }
    }
  }

  /** Forgets every entry of {@code replica}. */
  void dropReplica(int replica) {
    byReplica.remove(replica);
  }
}

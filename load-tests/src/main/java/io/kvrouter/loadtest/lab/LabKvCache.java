package io.kvrouter.loadtest.lab;

import java.util.Arrays;

/**
 * The lab engine's paged prefix cache, with the semantics of the simulated engine's {@code
 * io.kvrouter.sim.PagedKvCache} (vLLM v1 {@code block_pool.py}: reference counts, unreferenced
 * cached blocks stay reusable, least recently freed evicted first) but stored only for cached
 * blocks, so an "unlimited" engine costs memory for what it caches, not for its capacity.
 *
 * <p>Contract. A block is either referenced (by one or more running requests), or free. A block
 * with a hash (a cached prefix block, named by its router key) stays findable while free, until it
 * is reallocated. Blocks without a hash (a request's partial or output blocks, or a duplicate of a
 * block cached by a concurrent request) are anonymous: counted, not stored.
 *
 * <ul>
 *   <li>{@link #cachedPrefix}: leading keys present, touching nothing;
 *   <li>{@link #touch}: takes a reference on the blocks {@code cachedPrefix} found;
 *   <li>{@link #allocate}: one anonymous block, taking an anonymous free block first and otherwise
 *       evicting the least recently freed cached block (reported to the {@link EvictionSink});
 *   <li>{@link #register}: an anonymous referenced block of the caller gets a hash, unless the hash
 *       is already cached (then it stays anonymous, as in the sim);
 *   <li>{@link #releaseHashed}/{@link #releaseAnonymous}: drop one reference.
 * </ul>
 *
 * <p>Deviation from the sim, stated: the sim keeps every free block, hashed or not, in one LRU
 * queue; here anonymous free blocks are taken before any cached one. A cached block is therefore
 * never evicted earlier than in the sim, at most later.
 *
 * <p>Cost: expected O(1) per block for every operation; about 60 bytes per cached block (a {@link
 * LongIntMap} slot plus 20 bytes of entry arrays). Not thread-safe.
 */
final class LabKvCache {

  /** Receives evicted keys. */
  @FunctionalInterface
  interface EvictionSink {
    void evicted(long key);
  }

  private final long capacity;
  private final EvictionSink sink;
  private final LongIntMap byKey = new LongIntMap(1 << 12);
  private final LabLruList free = new LabLruList();
  private int[] refs = new int[1 << 12];
  private long freeCached;
  private long usedHashed;
  private long usedAnonymous;

  /**
   * @param capacity blocks; {@code Long.MAX_VALUE / 4} or so for "unlimited"
   */
  LabKvCache(long capacity, EvictionSink sink) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be at least 1 block, was " + capacity);
    }
    this.capacity = capacity;
    this.sink = sink;
  }

  long capacity() {
    return capacity;
  }

  /** Referenced blocks. */
  long usedBlocks() {
    return usedHashed + usedAnonymous;
  }

  /** Unreferenced blocks, cached or not. */
  long freeBlocks() {
    return capacity - usedBlocks();
  }

  /** Cached blocks (referenced or free). */
  int cachedBlocks() {
    return byKey.size();
  }

  boolean contains(long key) {
    return byKey.containsKey(key);
  }

  /**
   * Leading keys present, at most {@code limit}; writes their entries to {@code entries} (for
   * {@link #freeAmongCached} and {@link #touch}, valid until the cache next changes).
   */
  int cachedPrefix(long[] keys, int limit, int[] entries) {
    int n = Math.min(limit, keys.length);
    for (int i = 0; i < n; i++) {
      int e = byKey.get(keys[i]);
      if (e == LongIntMap.MISSING) {
        return i;
      }
      entries[i] = e;
    }
    return n;
  }

  /** Of the first {@code count} entries from {@link #cachedPrefix}, how many are free. */
  int freeAmongCached(int[] entries, int count) {
    int n = 0;
    for (int i = 0; i < count; i++) {
      if (refs[entries[i]] == 0) {
        n++;
      }
    }
    return n;
  }

  /** Takes a reference on the first {@code count} entries from {@link #cachedPrefix}. */
  void touch(int[] entries, int count) {
    for (int i = 0; i < count; i++) {
      int e = entries[i];
      if (refs[e] == 0) {
        free.unlink(e);
        freeCached--;
        usedHashed++;
      }
      refs[e]++;
    }
  }

  /** Takes one anonymous block; false when none is free. */
  boolean allocate() {
    if (freeBlocks() <= 0) {
      return false;
    }
    if (freeBlocks() - freeCached <= 0) {
      int e = free.head();
      free.unlink(e);
      freeCached--;
      long key = free.key(e);
      byKey.remove(key);
      free.release(e);
      sink.evicted(key);
    }
    usedAnonymous++;
    return true;
  }

  /**
   * Gives one of the caller's anonymous referenced blocks the hash {@code key}.
   *
   * @return true when it became cached; false when the key was cached already (stays anonymous)
   */
  boolean register(long key) {
    int e = free.nextEntry();
    if (byKey.putIfAbsent(key, e) != LongIntMap.MISSING) {
      return false;
    }
    if (free.newEntry(key) != e) {
      throw new IllegalStateException("entry allocation out of step");
    }
    if (e >= refs.length) {
      refs = Arrays.copyOf(refs, free.capacity());
    }
    refs[e] = 1;
    usedAnonymous--;
    usedHashed++;
    return true;
  }

  void releaseHashed(long key) {
    int e = byKey.get(key);
    if (e == LongIntMap.MISSING || refs[e] <= 0) {
      throw new IllegalStateException("released a block that is not referenced: " + key);
    }
    if (--refs[e] == 0) {
      usedHashed--;
      freeCached++;
      free.append(e);
    }
  }

  void releaseAnonymous(int count) {
    if (count > usedAnonymous) {
      throw new IllegalStateException("released more anonymous blocks than referenced");
    }
    usedAnonymous -= count;
  }
}

package io.kvrouter.loadtest.lab;

/**
 * The lab engine's CPU offload tier, with the semantics of the simulated engine's {@code
 * io.kvrouter.sim.CpuOffloadTier} (vLLM's offloading connector): a bounded, least recently used set
 * of blocks holding a copy of every block the GPU cache registers, so that a block the GPU later
 * evicts can be loaded back instead of recomputed. Blocks are named by router key.
 *
 * <ul>
 *   <li>{@link #offload}: the blocks become held (a held one becomes most recently used); the newly
 *       held ones are reported to the {@link Sink} as stored, then the least recently used beyond
 *       the capacity as removed, as the connector publishes {@code BlockStored} / {@code
 *       BlockRemoved} with medium CPU;
 *   <li>{@link #loadableRun}: the leading run of a prompt's blocks after its GPU hit that the tier
 *       holds (touching them): what an admitted request loads back rather than computes.
 * </ul>
 *
 * <p>Cost: expected O(1) per block; about 40 bytes per held block. Not thread-safe.
 */
final class LabCpuTier {

  /** Receives the tier's changes, in order. */
  interface Sink {
    /** {@code keys[from, to)} that were not held before are now held. */
    void stored(long[] keys, int from, int to);

    void removed(long key);
  }

  private final long capacity;
  private final Sink sink;
  private final LongIntMap byKey = new LongIntMap(1 << 12);
  private final LabLruList lru = new LabLruList();
  private long[] fresh = new long[64];

  /**
   * @param capacity blocks held at most; 0 disables the tier
   */
  LabCpuTier(long capacity, Sink sink) {
    if (capacity < 0) {
      throw new IllegalArgumentException("CPU blocks must be >= 0, was " + capacity);
    }
    this.capacity = capacity;
    this.sink = sink;
  }

  boolean enabled() {
    return capacity > 0;
  }

  int size() {
    return byKey.size();
  }

  boolean contains(long key) {
    return byKey.containsKey(key);
  }

  /** Holds {@code keys[from, to)}, evicting the least recently used beyond the capacity. */
  void offload(long[] keys, int from, int to) {
    if (capacity == 0 || from >= to) {
      return;
    }
    int n = 0;
    if (fresh.length < to - from) {
      fresh = new long[Math.max(to - from, fresh.length * 2)];
    }
    for (int i = from; i < to; i++) {
      int e = byKey.get(keys[i]);
      if (e != LongIntMap.MISSING) {
        lru.unlink(e);
        lru.append(e);
        continue;
      }
      e = lru.newEntry(keys[i]);
      byKey.put(keys[i], e);
      lru.append(e);
      fresh[n++] = keys[i];
    }
    if (n > 0) {
      sink.stored(fresh, 0, n);
    }
    while (byKey.size() > capacity) {
      int e = lru.head();
      lru.unlink(e);
      byKey.remove(lru.key(e));
      lru.release(e);
      sink.removed(lru.key(e));
    }
  }

  /** How many of {@code keys[from, limit)} the tier holds as one leading run; touches them. */
  int loadableRun(long[] keys, int from, int limit) {
    if (capacity == 0) {
      return 0;
    }
    int n = 0;
    for (int i = from; i < limit; i++) {
      int e = byKey.get(keys[i]);
      if (e == LongIntMap.MISSING) {
        break;
      }
      lru.unlink(e);
      lru.append(e);
      n++;
    }
    return n;
  }
}

package io.kvrouter.sim;

import io.kvrouter.protocol.engine.EngineEvent;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * The sliding-window cache group (group 1) of a simulated hybrid model, kept beside the
 * full-attention {@link PagedKvCache} (group 0).
 *
 * <p>Contract:
 *
 * <ul>
 *   <li>{@link #store} holds the same block hashes group 0 computed and announces them in a {@link
 *       EngineEvent.BlockStored} with group 1, kind {@code "sliding_window"} and the window;
 *   <li>{@link #slide} frees a running sequence's blocks that left its window: they stay cached
 *       (reusable) on this group's free queue, as vLLM's freed blocks do;
 *   <li>a free block is evicted least recently freed first once the group holds more than its
 *       capacity, announced as {@link EngineEvent.BlockRemoved} of group 1;
 *   <li>{@link #hit} is the reusable part of a group-0 hit: the longest {@code L} whose last {@code
 *       ceil((window - 1) / blockSize)} blocks this group holds, else the leading held run;
 *   <li>{@link #admit} references the blocks of a hit that the window still needs; {@link #release}
 *       frees what a sequence still references.
 * </ul>
 *
 * <p>Cost: O(1) per block and operation but {@link #hit}, O(hit) at worst. Not thread-safe: the
 * engine loop owns it.
 *
 * <p>Implementation notes: follows vLLM at 002f3491, {@code
 * vllm/v1/core/single_type_kv_cache_manager.py} ({@code SlidingWindowManager}: {@code
 * find_longest_cache_hit} scans right to left for {@code sliding_window_contiguous_blocks} cached
 * blocks; {@code remove_skipped_blocks} frees blocks before {@code (computed - window + 1) /
 * block_size}); the hybrid coordinator searches this group within the full-attention hit only. One
 * simplification: vLLM's groups share one block pool; here group 1 has its own pool of {@code
 * capacity} blocks, so its evictions do not compete with group 0's. Per sequence it keeps the range
 * {@code [dropped, end)} of block positions it references; a hash already held by another sequence
 * is referenced, not stored twice (the same anonymous-duplicate rule as {@link PagedKvCache}).
 */
final class SlidingWindowGroup {

  static final int GROUP = 1;
  static final String KIND = "sliding_window";

  private final int window;
  private final int blockSize;
  private final int capacity;
  private final int contiguous;
  private final Map<Long, Integer> refs = new HashMap<>();
  private final LinkedHashSet<Long> free = new LinkedHashSet<>();
  private final Map<String, int[]> ranges = new HashMap<>();
  private final EventBuffer events = new EventBuffer();

  SlidingWindowGroup(int window, int blockSize, int capacity) {
    if (window < 1 || blockSize < 1 || capacity < 1) {
      throw new IllegalArgumentException("window, blockSize and capacity must be positive");
    }
    this.window = window;
    this.blockSize = blockSize;
    this.capacity = capacity;
    this.contiguous = window <= 1 ? 0 : (window - 1 + blockSize - 1) / blockSize;
  }

  int window() {
    return window;
  }

  /** True when this group holds the hash (referenced or free). */
  boolean holds(long hash) {
    return refs.containsKey(hash) || free.contains(hash);
  }

  /** The reusable leading blocks of a group-0 hit of {@code fullHit} blocks. */
  int hit(long[] hashes, int fullHit) {
    int run = 0;
    for (int i = fullHit - 1; i >= 0; i--) {
      if (holds(hashes[i])) {
        run++;
        if (run >= contiguous) {
          return i + run;
        }
      } else {
        run = 0;
      }
    }
    return run;
  }

  /**
   * References the last window's blocks of a {@link #hit} of {@code hit} blocks for {@code seq}.
   */
  void admit(String seq, long[] hashes, int hit) {
    int from = Math.max(0, hit - contiguous);
    for (int i = from; i < hit; i++) {
      reference(hashes[i]);
    }
    ranges.put(seq, new int[] {from, hit});
  }

  /**
   * Holds blocks {@code [from, to)} of {@code seq} (just computed) and announces the new ones; the
   * arguments are those of {@link PagedKvCache#cacheRun}.
   */
  void store(
      String seq,
      long[] hashes,
      int from,
      int to,
      int[] tokens,
      String loraName,
      java.util.function.IntFunction<List<EngineEvent.ExtraKey>> extraKeys) {
    int[] range = ranges.computeIfAbsent(seq, k -> new int[] {from, from});
    StoredRuns.each(
        from,
        to,
        i -> {
          if (holds(hashes[i])) {
            reference(hashes[i]);
            return false;
          }
          refs.put(hashes[i], 1);
          return true;
        },
        (runFrom, runTo) ->
            events.add(
                StoredRuns.event(
                    hashes, tokens, blockSize, runFrom, runTo, loraName, extraKeys, GROUP, KIND,
                    window)));
    range[1] = Math.max(range[1], to);
    evictOverCapacity();
  }

  /** Frees {@code seq}'s blocks that left the window once {@code computed} tokens are computed. */
  void slide(String seq, long[] hashes, int computed) {
    int[] range = ranges.get(seq);
    if (range == null) {
      return;
    }
    int lastUseful = Math.max(0, computed - window + 1) / blockSize;
    int until = Math.min(lastUseful, range[1]);
    for (int i = range[0]; i < until; i++) {
      unreference(hashes[i]);
    }
    range[0] = Math.max(range[0], until);
    evictOverCapacity();
  }

  /** Frees every block {@code seq} still references (finished or preempted). */
  void release(String seq, long[] hashes) {
    int[] range = ranges.remove(seq);
    if (range == null) {
      return;
    }
    for (int i = range[1] - 1; i >= range[0]; i--) {
      unreference(hashes[i]);
    }
    evictOverCapacity();
  }

  /** Forgets everything (the engine's prefix-cache reset; no sequence is live). */
  void clear() {
    refs.clear();
    free.clear();
    ranges.clear();
  }

  /** Hashes held, referenced or free. */
  int heldCount() {
    return refs.size() + free.size();
  }

  /** Events since the last drain, in order; clears them. */
  List<EngineEvent> drainEvents() {
    return events.drain();
  }

  private void reference(long hash) {
    if (free.remove(hash)) {
      refs.put(hash, 1);
    } else {
      refs.merge(hash, 1, Integer::sum);
    }
  }

  private void unreference(long hash) {
    Integer n = refs.get(hash);
    if (n == null) {
      return;
    }
    if (n > 1) {
      refs.put(hash, n - 1);
    } else {
      refs.remove(hash);
      free.add(hash);
    }
  }

  private void evictOverCapacity() {
    Iterator<Long> it = free.iterator();
    while (heldCount() > capacity && it.hasNext()) {
      long h = it.next();
      it.remove();
      events.add(new EngineEvent.BlockRemoved(new long[] {h}, null, GROUP));
    }
  }
}

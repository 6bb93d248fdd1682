package io.kvrouter.sim;

import io.kvrouter.protocol.engine.EngineEvent;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The simulated engine's CPU offload tier: a bounded, least-recently-used set of block hashes that
 * holds a copy of every block the GPU cache registers, as vLLM's offloading connector stores each
 * computed block to host memory, so that a block the GPU later evicts can be loaded back instead of
 * recomputed.
 *
 * <p>Events follow the connector's (vllm-project/vllm {@code vllm/distributed/kv_events.py} at
 * 0181ea31, {@code medium} "CPU"): a {@code BlockStored} with medium CPU and no token ids when
 * blocks are offloaded (a consumer knows their tokens from the GPU store of the same hashes), a
 * {@code BlockRemoved} with medium CPU when the tier drops its least recently used block.
 *
 * <p>Cost: O(1) per block (one access-ordered map). Not thread-safe: one engine loop owns it.
 */
final class CpuOffloadTier {

  private final int capacity;
  private final LinkedHashMap<Long, Boolean> held;
  private final EventBuffer events = new EventBuffer();
  private long loadedBlocks;

  /**
   * @param capacity blocks the tier holds at most; 0 disables it
   */
  CpuOffloadTier(int capacity) {
    if (capacity < 0) {
      throw new IllegalArgumentException("CPU blocks must be >= 0, was " + capacity);
    }
    this.capacity = capacity;
    this.held = new LinkedHashMap<>(16, 0.75f, true);
  }

  boolean enabled() {
    return capacity > 0;
  }

  /** Offloads {@code hashes[from, to)} (blocks of {@code blockSize} tokens), evicting as needed. */
  void offload(long[] hashes, int from, int to, int blockSize) {
    if (capacity == 0 || from >= to) {
      return;
    }
    List<Long> fresh = new ArrayList<>(to - from);
    for (int i = from; i < to; i++) {
      if (held.put(hashes[i], Boolean.TRUE) == null) {
        fresh.add(hashes[i]);
      }
    }
    if (!fresh.isEmpty()) {
      events.add(
          new EngineEvent.BlockStored(
              fresh.stream().mapToLong(Long::longValue).toArray(),
              null,
              new int[0],
              blockSize,
              null,
              "CPU"));
    }
    while (held.size() > capacity) {
      Map.Entry<Long, Boolean> eldest = held.entrySet().iterator().next();
      held.remove(eldest.getKey());
      events.add(new EngineEvent.BlockRemoved(new long[] {eldest.getKey()}, "CPU"));
    }
  }

  /**
   * How many of {@code hashes[from, limit)} the tier holds as one leading run: the blocks a request
   * whose GPU prefix hit ends at {@code from} can load instead of computing. Touches them.
   */
  int loadableRun(long[] hashes, int from, int limit) {
    int n = 0;
    for (int i = from; i < limit && held.get(hashes[i]) != null; i++) {
      n++;
    }
    return n;
  }

  /** Counts {@code blocks} loaded back to GPU. */
  void loaded(int blocks) {
    loadedBlocks += blocks;
  }

  /** Blocks loaded back from this tier since start. */
  long loadedBlocks() {
    return loadedBlocks;
  }

  /** Events since the last drain. */
  List<EngineEvent> drainEvents() {
    return events.drain();
  }

  /** Forgets every block (prefix-cache reset), announcing nothing: the reset event covers it. */
  void clear() {
    held.clear();
  }
}

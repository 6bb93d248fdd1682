package io.kvrouter.sim;

import io.kvrouter.protocol.engine.EngineEvent;
import java.util.ArrayList;
import java.util.List;

/**
 * Where a simulated engine's KV blocks live, seen from its scheduler: the GPU block pool (the
 * full-attention group 0, {@link PagedKvCache}), an optional sliding-window group beside it ({@link
 * SlidingWindowGroup}) and the CPU offload tier ({@link CpuOffloadTier}). It answers what a
 * sequence may reuse at its first admission, takes and gives back the sequence's blocks in every
 * tier at once, registers what a pass computed in each, and hands out the pass's KV events in the
 * order a consumer needs them.
 *
 * <p>Contract:
 *
 * <ul>
 *   <li>{@link #hit}: the leading blocks a sequence reuses on the GPU: the pool's cached prefix,
 *       cut to what the window group still holds when there is one; {@link #loadable}: the run
 *       after it that the CPU tier can load back instead (none with a window group: the CPU tier is
 *       not combined with one here);
 *   <li>{@link #admit} references a hit in the pool and the window group and counts the loaded
 *       blocks; {@link #ensureBlocks} allocates the pool blocks a sequence's tokens need; {@link
 *       #release} gives back all a sequence holds;
 *   <li>{@link #registerComputed} registers a sequence's newly full, computed blocks in the pool,
 *       the window group and the CPU tier, and lets the window slide past what left it;
 *   <li>{@link #drainEvents}: the pool's events, then the window group's, then the CPU tier's
 *       (after the GPU stores that tell a consumer their tokens).
 * </ul>
 *
 * <p>Cost: that of the tiers; O(blocks touched) per call. Not thread-safe: one engine loop owns it.
 */
final class SimKvTiers {

  private final int blockSize;
  private final PagedKvCache gpu;
  private final CpuOffloadTier cpu;
  private final SlidingWindowGroup window;

  SimKvTiers(SimEngineConfig config) {
    this.blockSize = config.blockSize();
    this.gpu = new PagedKvCache(config.numBlocks());
    this.cpu = new CpuOffloadTier(config.cpuBlocks());
    this.window =
        config.slidingWindow() > 0
            ? new SlidingWindowGroup(config.slidingWindow(), config.blockSize(), config.numBlocks())
            : null;
  }

  /** The GPU block pool, for block-level questions (free blocks, usage, cached hashes). */
  PagedKvCache gpu() {
    return gpu;
  }

  /** The ids of the pool's blocks holding the cached leading blocks of {@code hashes}. */
  int[] cachedPrefixBlockIds(long[] hashes) {
    int n = gpu.cachedPrefixBlocks(hashes, hashes.length);
    int[] ids = new int[n];
    for (int i = 0; i < n; i++) {
      ids[i] = gpu.blockIdOf(hashes[i]);
    }
    return ids;
  }

  /** Blocks loaded back from the CPU tier since start. */
  long cpuLoadedBlocks() {
    return cpu.loadedBlocks();
  }

  /** The leading blocks of {@code seq}, at most {@code limit}, that it reuses on the GPU. */
  int hit(SimSequence seq, int limit) {
    int hit = gpu.cachedPrefixBlocks(seq.hashes, limit);
    // A hybrid model reuses a prefix only where the window group still holds its window.
    return window != null ? window.hit(seq.hashes, hit) : hit;
  }

  /** The blocks of {@code seq} after a GPU hit of {@code hit} that the CPU tier can load back. */
  int loadable(SimSequence seq, int hit, int limit) {
    return window != null ? 0 : cpu.loadableRun(seq.hashes, hit, limit);
  }

  /** True when {@code newBlocks} more blocks and the hit's free cached blocks fit in the pool. */
  boolean fits(SimSequence seq, int hit, int newBlocks) {
    return newBlocks + gpu.freeAmongCached(seq.hashes, hit) <= gpu.freeBlocks();
  }

  /** References {@code seq}'s hit of {@code hit} blocks; counts {@code loaded} blocks loaded. */
  void admit(SimSequence seq, int hit, int loaded) {
    cpu.loaded(loaded);
    int[] touched = new int[hit];
    gpu.touch(seq.hashes, hit, touched);
    for (int b : touched) {
      seq.addBlock(b);
    }
    if (window != null) {
      window.admit(seq.id(), seq.hashes, hit);
    }
  }

  /** Allocates the blocks {@code tokens} tokens of {@code seq} need; false when they do not fit. */
  boolean ensureBlocks(SimSequence seq, int tokens) {
    int need = (tokens + blockSize - 1) / blockSize - seq.numBlocks;
    if (need <= 0) {
      return true;
    }
    if (need > gpu.freeBlocks()) {
      return false;
    }
    for (int i = 0; i < need; i++) {
      seq.addBlock(gpu.allocate());
    }
    return true;
  }

  /**
   * Registers {@code seq}'s full computed blocks not registered yet in every tier (its hashes must
   * be extended first), and frees the window group's blocks that left its window.
   */
  void registerComputed(SimSequence seq) {
    registerThrough(seq, seq.numComputed);
    if (window != null) {
      window.slide(seq.id(), seq.hashes, seq.numComputed);
    }
  }

  /**
   * Registers {@code seq}'s full blocks up to {@code tokens} tokens not registered yet in every
   * tier (its hashes must be extended first): at scheduling, for the tokens the pass is about to
   * compute, as vLLM v1 caches a request's blocks when it allocates them ({@link
   * SimEngineCore#step}).
   */
  void registerThrough(SimSequence seq, int tokens) {
    int computedBlocks = Math.min(tokens / blockSize, seq.numHashes);
    if (computedBlocks > seq.numRegistered) {
      gpu.cacheRun(
          seq.blockIds,
          seq.hashes,
          seq.numRegistered,
          computedBlocks,
          seq.tokens,
          blockSize,
          seq.request.loraName(),
          i -> seq.extraKeys(i, blockSize));
      if (window != null) {
        window.store(
            seq.id(),
            seq.hashes,
            seq.numRegistered,
            computedBlocks,
            seq.tokens,
            seq.request.loraName(),
            i -> seq.extraKeys(i, blockSize));
      }
      cpu.offload(seq.hashes, seq.numRegistered, computedBlocks, blockSize);
      seq.numRegistered = computedBlocks;
    }
  }

  /** Gives back every block {@code seq} holds, in the pool and the window group. */
  void release(SimSequence seq) {
    gpu.release(seq.blockIds, seq.numBlocks);
    if (window != null) {
      window.release(seq.id(), seq.hashes);
    }
    seq.numBlocks = 0;
  }

  /**
   * vLLM's {@code reset_prefix_cache} over every tier, when no block is referenced.
   *
   * @return the pool's events (its {@code AllBlocksCleared}), or null when blocks are in use and
   *     nothing changed
   */
  List<EngineEvent> resetPrefixCache() {
    if (!gpu.resetPrefixCache()) {
      return null;
    }
    cpu.clear();
    if (window != null) {
      window.clear();
    }
    return gpu.drainEvents();
  }

  /** The events since the last drain: the pool's, the window group's, then the CPU tier's. */
  List<EngineEvent> drainEvents() {
    List<EngineEvent> events = gpu.drainEvents();
    List<EngineEvent> windowed = window == null ? List.of() : window.drainEvents();
    List<EngineEvent> offloaded = cpu.drainEvents();
    if (windowed.isEmpty() && offloaded.isEmpty()) {
      return events;
    }
    List<EngineEvent> all = new ArrayList<>(events);
    all.addAll(windowed);
    all.addAll(offloaded);
    return all;
  }
}

package io.kvrouter.sim;

import io.kvrouter.protocol.engine.EngineEvent;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * A paged KV cache with prefix caching in vLLM's manner: a fixed number of blocks, each either
 * referenced by running requests or free; a free block that still holds a cached (hashed) prefix
 * block stays reusable until it is reallocated, and free blocks are reallocated least recently
 * freed first, which evicts their hash and announces a {@link EngineEvent.BlockRemoved}.
 *
 * <p>Contract:
 *
 * <ul>
 *   <li>{@link #cachedPrefixBlocks} counts the longest run of leading hashes present, touching
 *       nothing;
 *   <li>{@link #touch} takes a reference on cached blocks (pulling them off the free queue);
 *   <li>{@link #allocate} hands out a free block with one reference, evicting its hash if it had
 *       one;
 *   <li>{@link #cacheRun} registers hashes for full blocks and announces them in one {@link
 *       EngineEvent.BlockStored} per run (a hash already held by another block is not registered
 *       twice and splits the run);
 *   <li>{@link #release} drops one reference per block, in reverse order, so a request's tail
 *       blocks are evicted before its head blocks;
 *   <li>events accumulate until {@link #drainEvents()}.
 * </ul>
 *
 * <p>Cost: O(1) per block for every operation (hash map plus intrusive doubly linked free list);
 * about 60 bytes per block plus a boxed map entry per cached block. Not thread-safe: one engine
 * loop owns it.
 *
 * <p>Implementation notes: follows vLLM v1 {@code vllm/v1/core/block_pool.py} and {@code
 * kv_cache_utils.py} ({@code FreeKVCacheBlockQueue}: a doubly linked list of free blocks;
 * allocation pops the head, freeing appends to the tail; {@code cached_block_hash_to_block}), and
 * the Dynamo mocker's vLLM block pool (ai-dynamo/dynamo {@code
 * lib/mocker/src/cache/vllm_block_pool.rs}); its events are those {@code docs/kv-events.md},
 * section 2, describes. Blocks are indexed 0..n-1 in parallel primitive arrays; {@code prev/next}
 * of -1 mean none. Unlike newer vLLM, which may keep two blocks with the same hash, a duplicate
 * here stays anonymous, so the set of announced hashes is exactly the set of cached hashes.
 */
public final class PagedKvCache {

  private final int numBlocks;
  private final long[] hash;
  private final boolean[] hashed;
  private final int[] refs;
  private final int[] prev;
  private final int[] next;
  private final boolean[] inFreeQueue;
  private final Map<Long, Integer> byHash = new HashMap<>();
  private int head = -1;
  private int tail = -1;
  private int freeCount;
  private final EventBuffer events = new EventBuffer();

  /**
   * @param numBlocks capacity in blocks, at least 1
   */
  public PagedKvCache(int numBlocks) {
    if (numBlocks < 1) {
      throw new IllegalArgumentException("numBlocks must be at least 1, was " + numBlocks);
    }
    this.numBlocks = numBlocks;
    hash = new long[numBlocks];
    hashed = new boolean[numBlocks];
    refs = new int[numBlocks];
    prev = new int[numBlocks];
    next = new int[numBlocks];
    inFreeQueue = new boolean[numBlocks];
    Arrays.fill(prev, -1);
    Arrays.fill(next, -1);
    for (int b = 0; b < numBlocks; b++) {
      append(b);
    }
  }

  public int numBlocks() {
    return numBlocks;
  }

  /** Blocks on the free queue (unreferenced, cached or not). */
  public int freeBlocks() {
    return freeCount;
  }

  /** Blocks referenced by at least one request. */
  public int usedBlocks() {
    return numBlocks - freeCount;
  }

  /** vLLM's {@code kv_cache_usage_perc}: referenced blocks over capacity, 0 to 1. */
  public double usage() {
    return (double) usedBlocks() / numBlocks;
  }

  /** Number of leading {@code hashes[0, limit)} present in the cache. */
  public int cachedPrefixBlocks(long[] hashes, int limit) {
    int n = Math.min(limit, hashes.length);
    for (int i = 0; i < n; i++) {
      if (!byHash.containsKey(hashes[i])) {
        return i;
      }
    }
    return n;
  }

  /** The block holding {@code hash}, or -1 when it is not cached. */
  public int blockIdOf(long hash) {
    Integer b = byHash.get(hash);
    return b == null ? -1 : b;
  }

  /** How many of the first {@code count} cached hashes sit on the free queue (touching costs). */
  public int freeAmongCached(long[] hashes, int count) {
    int n = 0;
    for (int i = 0; i < count; i++) {
      Integer b = byHash.get(hashes[i]);
      if (b != null && refs[b] == 0) {
        n++;
      }
    }
    return n;
  }

  /**
   * References the cached blocks of {@code hashes[0, count)}, which must all be present ({@link
   * #cachedPrefixBlocks}); writes their block ids to {@code out[0, count)}.
   */
  public void touch(long[] hashes, int count, int[] out) {
    for (int i = 0; i < count; i++) {
      Integer b = byHash.get(hashes[i]);
      if (b == null) {
        throw new IllegalStateException("hash " + Long.toUnsignedString(hashes[i]) + " not cached");
      }
      if (refs[b] == 0) {
        unlink(b);
      }
      refs[b]++;
      out[i] = b;
    }
  }

  /**
   * Takes the least recently freed block with one reference, evicting its cached hash if any.
   *
   * @return the block id, or -1 when no block is free
   */
  public int allocate() {
    int b = head;
    if (b < 0) {
      return -1;
    }
    unlink(b);
    if (hashed[b]) {
      byHash.remove(hash[b]);
      hashed[b] = false;
      events.add(new EngineEvent.BlockRemoved(new long[] {hash[b]}, null));
    }
    refs[b] = 1;
    return b;
  }

  /**
   * Registers hashes for full, computed blocks {@code blockIds[from, to)} of one sequence and
   * announces them.
   *
   * @param blockIds the sequence's block table
   * @param hashes the sequence's block hashes, aligned with {@code blockIds}
   * @param from first block to register
   * @param to one past the last
   * @param tokens the sequence's tokens (block i is {@code tokens[i*blockSize, (i+1)*blockSize)})
   * @param blockSize tokens per block
   * @param loraName adapter name for the event, or null
   */
  public void cacheRun(
      int[] blockIds,
      long[] hashes,
      int from,
      int to,
      int[] tokens,
      int blockSize,
      String loraName) {
    cacheRun(
        blockIds,
        hashes,
        from,
        to,
        tokens,
        blockSize,
        loraName,
        loraName == null ? null : i -> List.of(new EngineEvent.TextKey(loraName)));
  }

  /**
   * Registers and announces blocks {@code [from, to)} as the other overload does, the events
   * carrying {@code extraKeys.apply(i)} as block i's {@code extra_keys} as vLLM's do (its per-block
   * tuple: the adapter name, images as {@code (identifier, offset)}, the salt on block 0), so that
   * a consumer can key the blocks as the engine hashed them; none when {@code extraKeys} is null or
   * gives only empty lists.
   */
  public void cacheRun(
      int[] blockIds,
      long[] hashes,
      int from,
      int to,
      int[] tokens,
      int blockSize,
      String loraName,
      IntFunction<List<EngineEvent.ExtraKey>> extraKeys) {
    StoredRuns.each(
        from,
        to,
        i -> {
          int b = blockIds[i];
          if (hashed[b] || byHash.containsKey(hashes[i])) {
            return false;
          }
          hashed[b] = true;
          hash[b] = hashes[i];
          byHash.put(hashes[i], b);
          return true;
        },
        (runFrom, runTo) ->
            events.add(
                StoredRuns.event(
                    hashes, tokens, blockSize, runFrom, runTo, loraName, extraKeys, 0, null, 0)));
  }

  /** Drops one reference on each of {@code blockIds[0, count)}, last block first. */
  public void release(int[] blockIds, int count) {
    for (int i = count - 1; i >= 0; i--) {
      int b = blockIds[i];
      if (refs[b] <= 0) {
        throw new IllegalStateException("block " + b + " released more often than referenced");
      }
      if (--refs[b] == 0) {
        append(b);
      }
    }
  }

  /**
   * vLLM's {@code reset_prefix_cache}: forgets every cached hash, only when no block is referenced,
   * and announces {@link EngineEvent.AllBlocksCleared}.
   *
   * @return false (and nothing changes) when blocks are still in use
   */
  public boolean resetPrefixCache() {
    if (usedBlocks() > 0) {
      return false;
    }
    byHash.clear();
    Arrays.fill(hashed, false);
    events.add(new EngineEvent.AllBlocksCleared());
    return true;
  }

  /** True when the hash is cached (referenced or free). */
  public boolean contains(long blockHash) {
    return byHash.containsKey(blockHash);
  }

  /** A copy of all cached hashes. Cost O(cached blocks). */
  public long[] cachedHashes() {
    long[] out = new long[byHash.size()];
    int i = 0;
    for (Long h : byHash.keySet()) {
      out[i++] = h;
    }
    return out;
  }

  /** Number of cached hashes. */
  public int cachedCount() {
    return byHash.size();
  }

  /** Events since the last drain, in order; clears them. */
  public List<EngineEvent> drainEvents() {
    return events.drain();
  }

  private void append(int b) {
    prev[b] = tail;
    next[b] = -1;
    if (tail >= 0) {
      next[tail] = b;
    } else {
      head = b;
    }
    tail = b;
    inFreeQueue[b] = true;
    freeCount++;
  }

  private void unlink(int b) {
    if (!inFreeQueue[b]) {
      throw new IllegalStateException("block " + b + " is not free");
    }
    if (prev[b] >= 0) {
      next[prev[b]] = next[b];
    } else {
      head = next[b];
    }
    if (next[b] >= 0) {
      prev[next[b]] = prev[b];
    } else {
      tail = prev[b];
    }
    prev[b] = -1;
    next[b] = -1;
    inFreeQueue[b] = false;
    freeCount--;
  }
}

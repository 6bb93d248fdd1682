package io.kvrouter.loadtest.lab;

import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.Tier;
import io.kvrouter.sim.TimingModel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Where a {@link LabEngine}'s KV blocks live, seen from its scheduler, and what they announce: the
 * GPU prefix cache ({@link LabKvCache}) and the optional CPU offload tier ({@link LabCpuTier}), as
 * the sim engine's {@code SimKvTiers} holds its pool and tiers. It answers what a request reuses at
 * admission, takes and gives back its blocks, registers the blocks a pass computed (announcing the
 * newly cached runs and offloading them to the CPU tier) and stamps each pass's events into one
 * {@link KvEventBatch}.
 *
 * <p>Events: per pass, the GPU's newly cached runs ({@link BlocksStored} with router keys and
 * engine hashes, {@link #engineHash}) and evictions ({@link BlocksRemoved} by engine hash), then
 * the CPU tier's stores and removals ({@link Tier#CPU}, after the GPU stores of the same blocks, as
 * the sim publishes), in one batch per pass with a gap-free {@code seq} (epoch 0).
 *
 * <p>Cost: O(blocks touched) per call; the admission lookup reuses one scratch array. Not
 * thread-safe: one engine owns it.
 */
final class LabKvTiers {

  private final String replicaId;
  private final int blockSize;
  private final LabKvCache cache;
  private final LabCpuTier cpu;
  private final List<KvEvent> events = new ArrayList<>();
  private final List<KvEvent> offloaded = new ArrayList<>();
  private int[] entries = new int[1024];
  private long seq;

  /**
   * @param cpuBlocks blocks of the CPU offload tier, 0 for none
   */
  LabKvTiers(String replicaId, int blockSize, long capacityBlocks, long cpuBlocks) {
    this.replicaId = replicaId;
    this.blockSize = blockSize;
    this.cache =
        new LabKvCache(
            capacityBlocks,
            key -> events.add(new BlocksRemoved(new long[] {engineHash(key)}, Tier.GPU)));
    this.cpu =
        new LabCpuTier(
            cpuBlocks,
            new LabCpuTier.Sink() {
              @Override
              public void stored(long[] keys, int from, int to) {
                offloaded.add(announcement(keys, from, to, BlocksStored.ROOT, Tier.CPU));
              }

              @Override
              public void removed(long key) {
                offloaded.add(new BlocksRemoved(new long[] {engineHash(key)}, Tier.CPU));
              }
            });
  }

  /** The engine's own hash of a block (SplitMix64 finaliser of the router key): not the key. */
  static long engineHash(long routerKey) {
    long z = routerKey ^ 0x5851F42D4C957F2DL;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  LabKvCache cache() {
    return cache;
  }

  LabCpuTier cpu() {
    return cpu;
  }

  /**
   * The leading blocks of {@code s}, at most {@code limit}, cached on the GPU; remembered for
   * {@link #fits} and {@link #admit} until the cache next changes.
   */
  int hit(LabSequence s, int limit) {
    if (entries.length < s.keys.length) {
      entries = new int[Math.max(s.keys.length, entries.length * 2)];
    }
    return cache.cachedPrefix(s.keys, limit, entries);
  }

  /** True when {@code newBlocks} more blocks and the last hit's free cached blocks fit. */
  boolean fits(int hit, long newBlocks) {
    return newBlocks + cache.freeAmongCached(entries, hit) <= cache.freeBlocks();
  }

  /** References the last {@link #hit} ({@code hit} blocks) for {@code s}. */
  void admit(LabSequence s, int hit) {
    cache.touch(entries, hit);
    for (int b = 0; b < hit; b++) {
      s.addBlock(s.keys[b]);
    }
  }

  /**
   * The time of a pass of {@code prefillTokens} uncached tokens and {@code decodeTokens} decode
   * steps under {@code timing}, at the cache's utilisation now.
   */
  long passMicros(TimingModel timing, int prefillTokens, int decodeTokens) {
    int used = (int) Math.min(Integer.MAX_VALUE, cache.usedBlocks());
    int total = (int) Math.min(Integer.MAX_VALUE, cache.capacity());
    return timing.passMicros(prefillTokens, decodeTokens, used, total);
  }

  /**
   * Allocates for each of {@code seqs} the blocks {@code more} more tokens need, when they all fit
   * at once; false, allocating nothing, when they do not.
   */
  boolean ensureAll(List<LabSequence> seqs, int more) {
    long need = 0;
    for (LabSequence s : seqs) {
      need += Math.max(0, (s.numComputed + more + blockSize - 1) / blockSize - s.numBlocks);
    }
    if (need > cache.freeBlocks()) {
      return false;
    }
    for (LabSequence s : seqs) {
      if (!ensureBlocks(s, s.numComputed + more)) {
        throw new IllegalStateException("block accounting broken for " + s.requestId);
      }
    }
    return true;
  }

  /** Allocates the blocks {@code tokens} tokens of {@code s} need; false when they do not fit. */
  boolean ensureBlocks(LabSequence s, long tokens) {
    long need = (tokens + blockSize - 1) / blockSize - s.numBlocks;
    if (need <= 0) {
      return true;
    }
    if (need > cache.freeBlocks()) {
      return false;
    }
    for (long i = 0; i < need; i++) {
      cache.allocate();
      s.addBlock(0L);
    }
    return true;
  }

  /**
   * Registers {@code s}'s full blocks up to {@code tokens} tokens not registered yet (those its
   * keys name: the prompt's, and the answer's when the workload knows it), announcing each newly
   * cached run, and offloads them to the CPU tier: called at scheduling, for the tokens the pass is
   * about to compute, as vLLM v1 caches blocks when it allocates them ({@code SimEngineCore}).
   */
  void registerThrough(LabSequence s, int tokens) {
    int computedBlocks = Math.min(tokens / blockSize, s.keys.length);
    int runStart = -1;
    for (int i = s.numRegistered; i <= computedBlocks; i++) {
      boolean fresh = i < computedBlocks && s.held[i] == 0 && cache.register(s.keys[i]);
      if (fresh) {
        s.held[i] = s.keys[i];
        if (runStart < 0) {
          runStart = i;
        }
      } else if (runStart >= 0) {
        events.add(
            announcement(
                s.keys,
                runStart,
                i,
                runStart == 0 ? BlocksStored.ROOT : s.keys[runStart - 1],
                Tier.GPU));
        runStart = -1;
      }
    }
    if (computedBlocks > s.numRegistered) {
      cpu.offload(s.keys, s.numRegistered, computedBlocks);
    }
    s.numRegistered = Math.max(s.numRegistered, computedBlocks);
  }

  /** Gives back every block {@code s} holds (cached ones last block first). */
  void release(LabSequence s) {
    int anonymous = 0;
    for (int i = s.numBlocks - 1; i >= 0; i--) {
      if (s.held[i] != 0) {
        cache.releaseHashed(s.held[i]);
      } else {
        anonymous++;
      }
    }
    cache.releaseAnonymous(anonymous);
    s.numBlocks = 0;
  }

  /** The events since the last batch, stamped with the next {@code seq}; null when none. */
  KvEventBatch drainBatch() {
    events.addAll(offloaded); // after the GPU stores of the same blocks, as the sim publishes
    offloaded.clear();
    if (events.isEmpty()) {
      return null;
    }
    KvEventBatch b = new KvEventBatch(replicaId, 0, seq++, events.toArray(new KvEvent[0]));
    events.clear();
    return b;
  }

  /** Drops the events not batched yet (the engine died in the pass that made them). */
  void dropEvents() {
    events.clear();
    offloaded.clear();
  }

  private static BlocksStored announcement(long[] keys, int from, int to, long parent, Tier tier) {
    long[] routerKeys = Arrays.copyOfRange(keys, from, to);
    long[] hashes = new long[routerKeys.length];
    for (int i = 0; i < hashes.length; i++) {
      hashes[i] = engineHash(routerKeys[i]);
    }
    return new BlocksStored(parent, hashes, routerKeys, tier);
  }
}

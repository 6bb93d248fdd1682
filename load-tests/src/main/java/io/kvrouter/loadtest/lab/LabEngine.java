package io.kvrouter.loadtest.lab;

import io.kvrouter.agent.sim.MockerTimingModel;
import io.kvrouter.agent.sim.TimingModel;
import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.Tier;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One simulated engine of the lab, in virtual time: the scheduler of the sim engine ({@code
 * io.kvrouter.agent.sim.SimEngineCore}: vLLM v1 continuous batching with chunked prefill, running
 * requests first, then waiting ones FCFS within {@code maxNumSeqs} and the token budget, longest
 * cached prefix at first admission capped at {@code promptLength − 1} tokens, recompute preemption
 * of the most recently admitted request) over a {@link LabKvCache}, timed by the sim's default
 * {@link MockerTimingModel} (the Dynamo mocker's polynomial).
 *
 * <p>Why not the sim core itself: measured on this machine, {@code SimEngineCore} replays 2,000
 * conversation-trace requests over 8 engines in about 11 s (one SHA-256 per 16-token block and one
 * pass object per decode token), so all ten policies over the 12,031-request trace would take about
 * 12 minutes. This engine differs in three stated ways: (1) a block's engine hash is a bijective
 * mix of its router key instead of vLLM's SHA-256 (the router still maps removals through its
 * per-replica engine-hash bridge); (2) blocks of generated tokens are never registered as cached
 * (no trace prompt can hit them; they occupy capacity all the same); (3) runs of pure decode passes
 * (nothing waiting, every running request decoding) are taken as one macro pass of k identical
 * passes, cut short at the first pass boundary after a new arrival ({@link #interrupt}), with the
 * KV utilisation of the decode term taken at its start. {@code LabEngineTest} checks it against
 * {@code SimEngineCore} on the same requests.
 *
 * <p>Events: per pass, the newly cached runs ({@link BlocksStored} with router keys and engine
 * hashes) and evictions ({@link BlocksRemoved} by engine hash), stamped into one {@link
 * KvEventBatch} per pass with a gap-free {@code seq} (epoch 0).
 *
 * <p>CPU tier (optional, {@link LabCpuTier}): as the sim engine's {@code CpuOffloadTier} with
 * vLLM's offloading connector, every block the GPU cache registers is also stored to a bounded LRU
 * tier in host memory, announced as {@link BlocksStored} with {@link Tier#CPU} after the GPU stores
 * of the same pass (with router keys: the bridge an agent would apply to the connector's event,
 * which carries no tokens), and dropped from it with {@link BlocksRemoved} {@link Tier#CPU}. A
 * request admitted with a GPU prefix hit of h blocks loads the tier's leading run after block h
 * instead of computing it, and the pass that admits it takes {@code cpuLoadMicrosPerBlock} longer
 * per loaded block (the sim adds the same to its pass). Loaded blocks count as cached prompt tokens
 * ({@link #prefixHits}), and apart in {@link #cpuHits}.
 *
 * <p>LoRA adapters (optional, {@link #withAdapters}): the engine holds at most {@code slots}
 * adapters loaded, least recently used evicted, as vLLM's cache of adapters in host memory ({@code
 * max_cpu_loras}); a request for an adapter it does not hold loads it when admitted, and that pass
 * takes {@code loadMicros} longer per adapter loaded. Deviation, stated: vLLM's per-batch limit
 * ({@code max_loras}) is not modelled, so an evicted adapter's running requests go on.
 *
 * <p>Cost per pass: O(scheduled requests + blocks allocated or registered); per macro pass
 * O(running requests + blocks allocated). Not thread-safe.
 *
 * <p>Over 400 lines because it is one scheduler (admission, chunked prefill, preemption, macro
 * passes) whose steps all read and write the same running and waiting queues; its block pool is
 * already apart ({@link LabKvCache}), and splitting the pass would spread one vLLM pass over
 * classes that {@code LabEngineTest} compares, as a whole, with {@code SimEngineCore}.
 */
final class LabEngine {

  /** Receives request milestones at pass ends. */
  interface Listener {
    void firstToken(LabEngine engine, LabSequence seq, long timeMicros);

    void finished(LabEngine engine, LabSequence seq, long timeMicros);
  }

  private final int replica;
  private final String replicaId;
  private final int blockSize;
  private final int maxNumSeqs;
  private final int maxBatchedTokens;
  private final TimingModel timing = new MockerTimingModel(1.0);
  private final LabKvCache cache;
  private final Listener listener;
  private final ArrayDeque<LabSequence> waiting = new ArrayDeque<>();
  private final List<LabSequence> running = new ArrayList<>();
  private final List<LabSequence> scheduled = new ArrayList<>();
  private int[] counts = new int[64];
  private int[] entries = new int[1024];
  private final List<KvEvent> events = new ArrayList<>();
  private final List<KvEvent> offloaded = new ArrayList<>();
  private long seq;

  private boolean busy;
  private long passStart;
  private long passEnd;
  private int macroPasses;
  private long macroPassMicros;

  private final LabCpuTier cpu;
  private final long cpuLoadMicrosPerBlock;
  private int loadedThisPass;
  private java.util.LinkedHashMap<String, Boolean> adapters;
  private int adapterSlots;
  private long adapterLoadMicros;
  private int adaptersLoadedThisPass;
  private long adapterLoads;

  private long prefixQueries;
  private long prefixHits;
  private long cpuHits;
  private long uncachedPrefill;

  /**
   * @param cpuBlocks blocks of the CPU offload tier, 0 for none
   * @param cpuLoadMicrosPerBlock time to load one block back from it, added to the pass
   */
  LabEngine(
      int replica,
      String replicaId,
      int blockSize,
      long capacityBlocks,
      int maxNumSeqs,
      int maxBatchedTokens,
      long cpuBlocks,
      long cpuLoadMicrosPerBlock,
      Listener listener) {
    if (cpuLoadMicrosPerBlock < 0) {
      throw new IllegalArgumentException("cpuLoadMicrosPerBlock must be >= 0");
    }
    this.replica = replica;
    this.replicaId = replicaId;
    this.blockSize = blockSize;
    this.maxNumSeqs = maxNumSeqs;
    this.maxBatchedTokens = maxBatchedTokens;
    this.listener = listener;
    this.cache =
        new LabKvCache(
            capacityBlocks,
            key -> events.add(new BlocksRemoved(new long[] {engineHash(key)}, Tier.GPU)));
    this.cpuLoadMicrosPerBlock = cpuLoadMicrosPerBlock;
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

  int replica() {
    return replica;
  }

  String replicaId() {
    return replicaId;
  }

  boolean busy() {
    return busy;
  }

  long passEnd() {
    return passEnd;
  }

  boolean hasWork() {
    return !waiting.isEmpty() || !running.isEmpty();
  }

  int runningCount() {
    return running.size();
  }

  int waitingCount() {
    return waiting.size();
  }

  double kvUsage() {
    return (double) cache.usedBlocks() / cache.capacity();
  }

  long prefixQueries() {
    return prefixQueries;
  }

  long prefixHits() {
    return prefixHits;
  }

  /**
   * Serves LoRA adapters: holds at most {@code slots} loaded (0: unbounded), loading one in {@code
   * loadMicros}. Returns this engine.
   */
  LabEngine withAdapters(int slots, long loadMicros) {
    this.adapters = new java.util.LinkedHashMap<>(16, 0.75f, true);
    this.adapterSlots = slots;
    this.adapterLoadMicros = loadMicros;
    return this;
  }

  /** True when the engine holds {@code adapter} loaded. */
  boolean holdsAdapter(String adapter) {
    return adapters != null && adapters.containsKey(adapter);
  }

  /** Adapters loaded since start. */
  long adapterLoads() {
    return adapterLoads;
  }

  /** Of {@link #prefixHits}, the tokens loaded back from the CPU tier. */
  long cpuHits() {
    return cpuHits;
  }

  LabCpuTier cpuTier() {
    return cpu;
  }

  /** Uncached prompt tokens admitted so far (the prefill work this engine was given). */
  long uncachedPrefillTokens() {
    return uncachedPrefill;
  }

  LabKvCache cache() {
    return cache;
  }

  /** Queues a request; the caller starts a pass if the engine is idle. */
  void submit(LabSequence s) {
    int blocksNeeded = (s.promptLength + s.maxTokens + blockSize - 1) / blockSize;
    if (blocksNeeded > cache.capacity()) {
      throw new IllegalArgumentException(
          "request "
              + s.requestId
              + " needs "
              + blocksNeeded
              + " blocks, more than the engine's "
              + cache.capacity());
    }
    waiting.addLast(s);
  }

  /**
   * A new arrival at {@code nowMicros} during a macro pass: cut it at the first pass boundary at or
   * after now. Returns true when the pass end moved (the caller reschedules).
   */
  boolean interrupt(long nowMicros) {
    if (!busy || macroPasses <= 1 || nowMicros >= passEnd) {
      return false;
    }
    long done = Math.max(1, (nowMicros - passStart + macroPassMicros - 1) / macroPassMicros);
    if (done >= macroPasses) {
      return false;
    }
    macroPasses = (int) done;
    passEnd = passStart + done * macroPassMicros;
    return true;
  }

  /**
   * Plans and starts a pass at {@code nowMicros}; returns its end, or -1 when there was nothing to
   * schedule (the engine stays idle).
   */
  long startPass(long nowMicros) {
    scheduled.clear();
    if (tryMacro(nowMicros)) {
      return passEnd;
    }
    int budget = maxBatchedTokens;
    int k = 0;
    boolean preempted = false;
    loadedThisPass = 0;
    adaptersLoadedThisPass = 0;
    for (int i = 0; i < running.size() && budget > 0; ) {
      LabSequence s = running.get(i);
      int n = Math.min(s.numTokens() - s.numComputed, budget);
      boolean fits = true;
      while (!ensureBlocks(s, s.numComputed + n)) {
        LabSequence victim = running.remove(running.size() - 1);
        preempt(victim);
        preempted = true;
        if (victim == s) {
          fits = false;
          break;
        }
      }
      if (!fits) {
        break;
      }
      add(s, n, k++);
      budget -= n;
      i++;
    }
    while (!preempted && budget > 0 && !waiting.isEmpty() && running.size() < maxNumSeqs) {
      LabSequence s = waiting.peekFirst();
      int maxHit = (s.numTokens() - 1) / blockSize;
      if (entries.length < s.keys.length) {
        entries = new int[Math.max(s.keys.length, entries.length * 2)];
      }
      int limit = Math.min(maxHit, s.keys.length);
      int hit = cache.cachedPrefix(s.keys, limit, entries);
      int loaded = s.numBlocks == 0 ? cpu.loadableRun(s.keys, hit, limit) : 0;
      int computed = (hit + loaded) * blockSize;
      boolean transferred = s.remotePrefill && s.numBlocks == 0 && s.cachedPromptTokens < 0;
      if (transferred) {
        computed = s.numTokens() - 1; // pulled from the prefill engine; the last token is computed
      }
      int n = Math.min(s.numTokens() - computed, budget);
      long newBlocks = ceilDiv(computed + n) - hit;
      if (newBlocks + cache.freeAmongCached(entries, hit) > cache.freeBlocks()) {
        break;
      }
      waiting.pollFirst();
      loadedThisPass += loaded;
      useAdapter(s.adapter);
      cache.touch(entries, hit);
      for (int b = 0; b < hit; b++) {
        s.addBlock(s.keys[b]);
      }
      s.numComputed = computed;
      s.numRegistered = hit;
      if (s.cachedPromptTokens < 0) {
        s.cachedPromptTokens = (hit + loaded) * blockSize;
        prefixQueries += s.promptLength;
        prefixHits += (hit + loaded) * blockSize;
        cpuHits += loaded * blockSize;
        uncachedPrefill += s.promptLength - computed;
      }
      if (!ensureBlocks(s, computed + n)) {
        throw new IllegalStateException("block accounting broken for " + s.requestId);
      }
      running.add(s);
      add(s, n, k++);
      budget -= n;
    }
    int prefillTokens = 0;
    int decodeTokens = 0;
    for (int j = 0; j < k; j++) {
      LabSequence s = scheduled.get(j);
      if (counts[j] == 1 && s.decoding()) {
        decodeTokens++;
      } else {
        prefillTokens += counts[j];
      }
    }
    if (k == 0) {
      busy = false;
      return -1;
    }
    long duration =
        timing.passMicros(prefillTokens, decodeTokens, usedForTiming(), totalForTiming())
            + loadedThisPass * cpuLoadMicrosPerBlock
            + adaptersLoadedThisPass * adapterLoadMicros;
    busy = true;
    macroPasses = 1;
    passStart = nowMicros;
    passEnd = nowMicros + Math.max(1, duration);
    return passEnd;
  }

  private boolean tryMacro(long nowMicros) {
    if (!waiting.isEmpty() || running.isEmpty()) {
      return false;
    }
    int passes = Integer.MAX_VALUE;
    for (LabSequence s : running) {
      if (!s.decoding()) {
        return false;
      }
      passes = Math.min(passes, s.maxTokens - s.outputs);
    }
    if (passes < 2) {
      return false;
    }
    long need = 0;
    for (LabSequence s : running) {
      need += Math.max(0, ceilDiv(s.numComputed + passes) - s.numBlocks);
    }
    if (need > cache.freeBlocks()) {
      return false;
    }
    long duration = timing.passMicros(0, running.size(), usedForTiming(), totalForTiming());
    for (LabSequence s : running) {
      if (!ensureBlocks(s, s.numComputed + passes)) {
        throw new IllegalStateException("block accounting broken in a macro pass");
      }
    }
    busy = true;
    macroPasses = passes;
    macroPassMicros = Math.max(1, duration);
    passStart = nowMicros;
    passEnd = nowMicros + passes * macroPassMicros;
    return true;
  }

  /** Touches {@code adapter}, loading it (and evicting the least recently used) when absent. */
  private void useAdapter(String adapter) {
    if (adapter == null || adapters == null || adapters.get(adapter) != null) {
      return;
    }
    adapters.put(adapter, Boolean.TRUE);
    adaptersLoadedThisPass++;
    adapterLoads++;
    if (adapterSlots > 0 && adapters.size() > adapterSlots) {
      adapters.remove(adapters.keySet().iterator().next());
    }
  }

  private int usedForTiming() {
    return (int) Math.min(Integer.MAX_VALUE, cache.usedBlocks());
  }

  private int totalForTiming() {
    return (int) Math.min(Integer.MAX_VALUE, cache.capacity());
  }

  private void add(LabSequence s, int n, int k) {
    if (k == counts.length) {
      counts = Arrays.copyOf(counts, k * 2);
    }
    scheduled.add(s);
    counts[k] = n;
  }

  /**
   * Completes the pass that ends now: tokens, registrations, releases, milestones. Returns the
   * pass's KV-event batch, or null when it produced none.
   */
  KvEventBatch completePass() {
    long end = passEnd;
    busy = false;
    List<LabSequence> finished = new ArrayList<>(2);
    if (macroPasses > 1) {
      for (LabSequence s : running) {
        s.numComputed += macroPasses;
        s.outputs += macroPasses;
        if (s.outputs >= s.maxTokens) {
          finished.add(s);
        }
      }
    } else {
      for (int j = 0; j < scheduled.size(); j++) {
        LabSequence s = scheduled.get(j);
        s.numComputed += counts[j];
        if (s.numComputed >= s.numTokens()) {
          s.outputs++;
          if (s.outputs == 1 && s.firstTokenMicros < 0) {
            s.firstTokenMicros = end;
            listener.firstToken(this, s, end);
          }
          if (s.outputs >= s.maxTokens) {
            finished.add(s);
          }
        }
        register(s);
      }
    }
    scheduled.clear();
    for (LabSequence s : finished) {
      running.remove(s);
      release(s);
    }
    KvEventBatch batch = drainBatch();
    for (LabSequence s : finished) {
      listener.finished(this, s, end);
    }
    return batch;
  }

  private void register(LabSequence s) {
    int computedBlocks = Math.min(s.numComputed / blockSize, s.keys.length);
    int runStart = -1;
    for (int i = s.numRegistered; i <= computedBlocks; i++) {
      boolean fresh = i < computedBlocks && s.held[i] == 0 && cache.register(s.keys[i]);
      if (fresh) {
        s.held[i] = s.keys[i];
        if (runStart < 0) {
          runStart = i;
        }
      } else if (runStart >= 0) {
        announce(s.keys, runStart, i);
        runStart = -1;
      }
    }
    if (computedBlocks > s.numRegistered) {
      cpu.offload(s.keys, s.numRegistered, computedBlocks);
    }
    s.numRegistered = Math.max(s.numRegistered, computedBlocks);
  }

  private void announce(long[] keys, int from, int to) {
    events.add(
        announcement(keys, from, to, from == 0 ? BlocksStored.ROOT : keys[from - 1], Tier.GPU));
  }

  private static BlocksStored announcement(long[] keys, int from, int to, long parent, Tier tier) {
    long[] routerKeys = Arrays.copyOfRange(keys, from, to);
    long[] hashes = new long[routerKeys.length];
    for (int i = 0; i < hashes.length; i++) {
      hashes[i] = engineHash(routerKeys[i]);
    }
    return new BlocksStored(parent, hashes, routerKeys, tier);
  }

  private KvEventBatch drainBatch() {
    events.addAll(offloaded); // after the GPU stores of the same blocks, as the sim publishes
    offloaded.clear();
    if (events.isEmpty()) {
      return null;
    }
    KvEventBatch b = new KvEventBatch(replicaId, 0, seq++, events.toArray(new KvEvent[0]));
    events.clear();
    return b;
  }

  private boolean ensureBlocks(LabSequence s, int tokens) {
    long need = ceilDiv(tokens) - s.numBlocks;
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

  private void release(LabSequence s) {
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

  private void preempt(LabSequence s) {
    release(s);
    s.numComputed = 0;
    s.numRegistered = 0;
    waiting.addFirst(s);
  }

  /**
   * The engine dies: every live request is returned (for a retry elsewhere) and nothing more
   * happens here. Events of the dying pass are dropped.
   */
  List<LabSequence> kill() {
    List<LabSequence> live = new ArrayList<>(running);
    live.addAll(waiting);
    running.clear();
    waiting.clear();
    scheduled.clear();
    events.clear();
    offloaded.clear();
    busy = false;
    return live;
  }

  private long ceilDiv(long tokens) {
    return (tokens + blockSize - 1) / blockSize;
  }
}

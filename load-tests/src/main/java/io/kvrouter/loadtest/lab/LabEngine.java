package io.kvrouter.loadtest.lab;

import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.sim.MockerTimingModel;
import io.kvrouter.sim.TimingModel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One simulated engine of the lab, in virtual time: the scheduler of the sim engine ({@code
 * io.kvrouter.sim.SimEngineCore}: vLLM v1 continuous batching with chunked prefill, running
 * requests first, then waiting ones FCFS within {@code maxNumSeqs} and the token budget, longest
 * cached prefix at first admission capped at {@code promptLength − 1} tokens, recompute preemption
 * of the most recently admitted request) over a {@link LabKvCache}, timed by the sim's default
 * {@link MockerTimingModel} (the Dynamo mocker's polynomial).
 *
 * <p>Why not the sim core itself: it computes one SHA-256 per 16-token block and makes one pass
 * object per decode token, too slow to replay a whole trace once per policy. This engine differs in
 * three stated ways: (1) a block's engine hash is a bijective mix of its router key instead of
 * vLLM's SHA-256 (the router still maps removals through its per-replica engine-hash bridge); (2)
 * blocks of generated tokens are registered as cached only when the request's keys name them (a
 * workload that knows the answer, {@code PromptKeys#engineOf}; a trace records none, and its
 * generated blocks occupy capacity all the same); (3) runs of pure decode passes (nothing waiting,
 * every running request decoding) are taken as one macro pass of k identical passes ({@link
 * LabPassClock}), cut short at the first pass boundary after a new arrival, with the KV utilisation
 * of the decode term taken at its start. {@code LabEngineTest} checks it against {@code
 * SimEngineCore} on the same requests.
 *
 * <p>Generated blocks: vLLM v1 caches every full block of a request's tokens, output included, as
 * the step that computes it is scheduled ({@code KVCacheManager.allocate_slots} caches up to {@code
 * min(computed + new tokens, request.num_tokens)}, {@code vllm/v1/core/kv_cache_manager.py}, commit
 * 003df296), and publishes them as {@code BlockStored}; SGLang inserts prompt and output into its
 * radix tree when a request finishes, all but the last output token ({@code
 * RadixCache.cache_finished_req} inserts {@code (origin_input_ids + output_ids)[:-1]}, {@code
 * python/sglang/srt/mem_cache/radix_cache.py}, commit 95769b28). Here a request whose keys reach
 * past its prompt registers each of those blocks once it is computed, in the pass that computes it
 * (after a macro pass, for the blocks its passes filled), and announces them as prompt blocks are.
 *
 * <p>Its blocks live in {@link LabKvTiers}: the GPU prefix cache ({@link LabKvCache}) and the
 * optional CPU offload tier ({@link LabCpuTier}), which also make the pass's KV-event batch. With a
 * CPU tier, a request admitted with a GPU prefix hit of h blocks loads the tier's leading run after
 * block h instead of computing it, and the pass that admits it takes {@code cpuLoadMicrosPerBlock}
 * longer per loaded block (the sim adds the same to its pass); loaded blocks count as cached prompt
 * tokens ({@link #prefixHits}), and apart in {@link #cpuHits}. With LoRA adapters ({@link
 * #withAdapters}, {@link LabLoraSlots}), the pass that admits a request whose adapter the engine
 * does not hold takes {@code loadMicros} longer per adapter loaded.
 *
 * <p>Cost per pass: O(scheduled requests + blocks allocated or registered); per macro pass
 * O(running requests + blocks allocated). Not thread-safe.
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
  private final LabKvTiers tiers;
  private final LabKvCache cache;
  private final Listener listener;
  private final ArrayDeque<LabSequence> waiting = new ArrayDeque<>();
  private final List<LabSequence> running = new ArrayList<>();
  private final List<LabSequence> scheduled = new ArrayList<>();
  private int[] counts = new int[64];

  /** Warm-ups not started yet, and those prefilling ({@link #submitWarm}). */
  private final ArrayDeque<LabSequence> warmWaiting = new ArrayDeque<>();

  private final List<LabSequence> warming = new ArrayList<>();
  private long warmedTokens;
  private long warmsDropped;

  private final LabPassClock clock = new LabPassClock();

  private final long cpuLoadMicrosPerBlock;
  private int loadedThisPass;

  /** The adapters loaded, or null when the engine serves none ({@link #withAdapters}). */
  private LabLoraSlots adapters;

  private long adapterLoadMicros;
  private int adaptersLoadedThisPass;

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
    this.tiers = new LabKvTiers(replicaId, blockSize, capacityBlocks, cpuBlocks);
    this.cache = tiers.cache();
    this.cpuLoadMicrosPerBlock = cpuLoadMicrosPerBlock;
  }

  int replica() {
    return replica;
  }

  String replicaId() {
    return replicaId;
  }

  boolean busy() {
    return clock.busy();
  }

  long passEnd() {
    return clock.end();
  }

  boolean hasWork() {
    return !waiting.isEmpty() || !running.isEmpty() || !warmWaiting.isEmpty() || !warming.isEmpty();
  }

  /** Prompt tokens prefilled by warm-ups so far. */
  long warmedTokens() {
    return warmedTokens;
  }

  /** Warm-ups cancelled or preempted before they finished. */
  long warmsDropped() {
    return warmsDropped;
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
    this.adapters = new LabLoraSlots(slots);
    this.adapterLoadMicros = loadMicros;
    return this;
  }

  /** True when the engine holds {@code adapter} loaded. */
  boolean holdsAdapter(String adapter) {
    return adapters != null && adapters.holds(adapter);
  }

  /** Adapters loaded since start. */
  long adapterLoads() {
    return adapters == null ? 0 : adapters.loads();
  }

  /** Of {@link #prefixHits}, the tokens loaded back from the CPU tier. */
  long cpuHits() {
    return cpuHits;
  }

  /** Uncached prompt tokens admitted so far (the prefill work this engine was given). */
  long uncachedPrefillTokens() {
    return uncachedPrefill;
  }

  LabKvCache cache() {
    return cache;
  }

  /**
   * Queues a request; the caller starts a pass if the engine is idle. A request of {@code priority}
   * 0 queues last (FCFS, vLLM's default); one of a positive priority goes before every waiting
   * request of a larger one (vLLM's {@code --scheduling-policy priority} orders its waiting queue
   * by the request's {@code priority}, lowest first, then by arrival).
   */
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
    if (s.priority == 0 || waiting.isEmpty() || waiting.peekLast().priority <= s.priority) {
      waiting.addLast(s);
      return;
    }
    List<LabSequence> after = new ArrayList<>();
    while (!waiting.isEmpty() && waiting.peekLast().priority > s.priority) {
      after.add(waiting.pollLast());
    }
    waiting.addLast(s);
    for (int i = after.size() - 1; i >= 0; i--) {
      waiting.addLast(after.get(i));
    }
  }

  /**
   * Queues a warm-up: a prompt prefix prefilled only with headroom: in a pass where no real request
   * waits nor prefills (its real requests all decode, or there are none), at most {@code
   * WARM_CHUNK_TOKENS} tokens; so a real request's own prefill passes never carry a warm-up, and
   * one arriving during a warm-up's pass waits at most that chunk's compute for it. A real request
   * that does not fit preempts every warm-up (their blocks computed so far stay cached, as a
   * preempted request's do), and one that cannot start without pushing the engine's used blocks
   * past {@code WARM_MAX_USAGE} of its capacity is dropped. The caller starts a pass if the engine
   * is idle.
   */
  void submitWarm(LabSequence s) {
    s.warm = true;
    warmWaiting.addLast(s);
  }

  /**
   * Prefill tokens a pass gives warm-ups at most: 2,048, about 40 ms of the mocker's pass time, the
   * longest a real request arriving mid-pass can wait for them (an assumption, chosen small against
   * the engine's 8,192-token budget).
   */
  static final int WARM_CHUNK_TOKENS = 2_048;

  /** A warm-up starts only while the engine's used blocks stay within this share (assumption). */
  static final double WARM_MAX_USAGE = 0.8;

  /** Drops the cancelled warm-ups, or with {@code all} every one (a real request needs room). */
  private void dropWarms(boolean all) {
    warmWaiting.removeIf(
        w -> {
          if (all || w.cancelled) {
            warmsDropped++;
            return true;
          }
          return false;
        });
    for (int i = warming.size() - 1; i >= 0; i--) {
      LabSequence w = warming.get(i);
      if (all || w.cancelled) {
        warming.remove(i);
        tiers.release(w);
        warmsDropped++;
      }
    }
  }

  /**
   * A new arrival at {@code nowMicros} during a macro pass: cut it at the first pass boundary at or
   * after now ({@link LabPassClock#interrupt}). Returns true when the pass end moved (the caller
   * reschedules).
   */
  boolean interrupt(long nowMicros) {
    return clock.interrupt(nowMicros);
  }

  /**
   * Plans and starts a pass at {@code nowMicros}; returns its end, or -1 when there was nothing to
   * schedule (the engine stays idle).
   */
  long startPass(long nowMicros) {
    scheduled.clear();
    dropWarms(false);
    if (tryMacro(nowMicros)) {
      return clock.end();
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
      while (!tiers.ensureBlocks(s, s.numComputed + n)) {
        if (!warming.isEmpty()) {
          dropWarms(true); // warm-ups give way before any real request is preempted
          continue;
        }
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
      int limit = Math.min((s.numTokens() - 1) / blockSize, s.keys.length);
      int hit = tiers.hit(s, limit);
      int loaded = s.numBlocks == 0 ? tiers.cpu().loadableRun(s.keys, hit, limit) : 0;
      int computed = (hit + loaded) * blockSize;
      boolean transferred = s.remotePrefill && s.numBlocks == 0 && s.cachedPromptTokens < 0;
      if (transferred) {
        computed = s.numTokens() - 1; // pulled from the prefill engine; the last token is computed
      }
      int n = Math.min(s.numTokens() - computed, budget);
      long newBlocks = (computed + n + blockSize - 1L) / blockSize - hit;
      if (!tiers.fits(hit, newBlocks) && !warming.isEmpty()) {
        dropWarms(true); // warm-ups give way to a real request
        hit = tiers.hit(s, limit);
        loaded = s.numBlocks == 0 ? tiers.cpu().loadableRun(s.keys, hit, limit) : 0;
        computed = transferred ? s.numTokens() - 1 : (hit + loaded) * blockSize;
        n = Math.min(s.numTokens() - computed, budget);
        newBlocks = (computed + n + blockSize - 1L) / blockSize - hit;
      }
      if (!tiers.fits(hit, newBlocks)) {
        break;
      }
      waiting.pollFirst();
      loadedThisPass += loaded;
      if (adapters != null && adapters.use(s.adapter)) {
        adaptersLoadedThisPass++;
      }
      tiers.admit(s, hit);
      s.numComputed = computed;
      s.numRegistered = hit;
      if (s.cachedPromptTokens < 0) {
        s.cachedPromptTokens = (hit + loaded) * blockSize;
        prefixQueries += s.promptLength;
        prefixHits += (hit + loaded) * blockSize;
        cpuHits += loaded * blockSize;
        uncachedPrefill += s.promptLength - computed;
      }
      if (!tiers.ensureBlocks(s, computed + n)) {
        throw new IllegalStateException("block accounting broken for " + s.requestId);
      }
      running.add(s);
      add(s, n, k++);
      budget -= n;
    }
    if (!preempted && waiting.isEmpty() && !prefills(k)) {
      k = scheduleWarms(k, Math.min(budget, WARM_CHUNK_TOKENS));
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
      clock.stop();
      return -1;
    }
    long duration =
        tiers.passMicros(timing, prefillTokens, decodeTokens)
            + loadedThisPass * cpuLoadMicrosPerBlock
            + adaptersLoadedThisPass * adapterLoadMicros;
    return clock.startOne(nowMicros, duration);
  }

  /** Whether any of the pass's first {@code k} scheduled requests prefills. */
  private boolean prefills(int k) {
    for (int j = 0; j < k; j++) {
      if (counts[j] != 1 || !scheduled.get(j).decoding()) {
        return true;
      }
    }
    return false;
  }

  /**
   * Gives warm-ups up to {@code budget} prefill tokens of this pass: those prefilling first, then
   * new ones while they fit under {@link #WARM_MAX_USAGE}. Returns the pass's new request count.
   */
  private int scheduleWarms(int k, int budget) {
    for (int i = 0; i < warming.size() && budget > 0; i++) {
      LabSequence w = warming.get(i);
      int n = Math.min(w.promptLength - w.numComputed, budget);
      if (n <= 0 || !tiers.ensureBlocks(w, w.numComputed + n)) {
        continue;
      }
      add(w, n, k++);
      budget -= n;
    }
    while (budget > 0 && !warmWaiting.isEmpty() && running.size() + warming.size() < maxNumSeqs) {
      LabSequence w = warmWaiting.pollFirst();
      int limit = Math.min((w.promptLength - 1) / blockSize, w.keys.length);
      int hit = tiers.hit(w, limit);
      int computed = hit * blockSize;
      if (hit >= limit) {
        continue; // already cached: nothing to warm
      }
      int n = Math.min(w.promptLength - computed, budget);
      long need = (w.promptLength + blockSize - 1L) / blockSize - hit;
      if (cache.usedBlocks() + need > WARM_MAX_USAGE * cache.capacity()) {
        warmsDropped++; // nothing to warm, or no headroom for it
        continue;
      }
      if (!tiers.fits(hit, (computed + n + blockSize - 1L) / blockSize - hit)) {
        warmsDropped++;
        continue;
      }
      tiers.admit(w, hit);
      w.numComputed = computed;
      w.numRegistered = hit;
      if (!tiers.ensureBlocks(w, computed + n)) {
        throw new IllegalStateException("block accounting broken for " + w.requestId);
      }
      warming.add(w);
      add(w, n, k++);
      budget -= n;
    }
    return k;
  }

  private boolean tryMacro(long nowMicros) {
    if (!waiting.isEmpty() || running.isEmpty() || !warming.isEmpty() || !warmWaiting.isEmpty()) {
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
    // The decode term's KV utilisation is taken at the macro pass's start, before it allocates.
    long duration = tiers.passMicros(timing, 0, running.size());
    if (!tiers.ensureAll(running, passes)) {
      return false;
    }
    clock.startMacro(nowMicros, passes, duration);
    return true;
  }

  /**
   * Puts {@code n} of {@code s}'s tokens in the pass and caches the blocks they fill at once, as
   * vLLM v1 does when it allocates them ({@code SimEngineCore}): a request admitted later in the
   * same pass hits them.
   */
  private void add(LabSequence s, int n, int k) {
    if (k == counts.length) {
      counts = Arrays.copyOf(counts, k * 2);
    }
    scheduled.add(s);
    counts[k] = n;
    tiers.registerThrough(s, s.numComputed + n);
  }

  /**
   * Completes the pass that ends now: tokens, releases, milestones. Returns the pass's KV-event
   * batch, or null when it produced none.
   */
  KvEventBatch completePass() {
    long end = clock.end();
    clock.stop();
    List<LabSequence> finished = new ArrayList<>(2);
    int passes = clock.passes();
    if (passes > 1) {
      for (LabSequence s : running) {
        s.numComputed += passes;
        s.outputs += passes;
        tiers.registerThrough(s, s.numComputed); // the generated blocks the passes filled
        if (s.outputs >= s.maxTokens) {
          finished.add(s);
        }
      }
    } else {
      for (int j = 0; j < scheduled.size(); j++) {
        LabSequence s = scheduled.get(j);
        s.numComputed += counts[j];
        if (s.warm) {
          warmedTokens += counts[j];
          if (s.numComputed >= s.promptLength && warming.remove(s)) {
            tiers.release(s); // its blocks stay cached for the turn it warms
          }
          continue;
        }
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
      }
    }
    scheduled.clear();
    for (LabSequence s : finished) {
      running.remove(s);
      tiers.release(s);
    }
    KvEventBatch batch = tiers.drainBatch();
    for (LabSequence s : finished) {
      listener.finished(this, s, end);
    }
    return batch;
  }

  private void preempt(LabSequence s) {
    tiers.release(s);
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
    warming.clear();
    warmWaiting.clear();
    scheduled.clear();
    tiers.dropEvents();
    clock.stop();
    return live;
  }
}

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
    return !waiting.isEmpty() || !running.isEmpty();
  }

  /**
   * Whether the engine holds no request, running or waiting, warm-ups included: what the ingress's
   * tracker counts as a replica with no request reserved once every router's reservations reached
   * it (a warm holds a reservation there too).
   */
  boolean idle() {
    return waiting.isEmpty() && running.isEmpty();
  }

  /**
   * The prompt tokens of {@code s} this engine would compute were it admitted now: all but its
   * longest cached prefix (capped as at admission). Changes nothing.
   */
  int uncachedTokens(LabSequence s) {
    int limit = Math.min((s.numTokens() - 1) / blockSize, s.keys.length);
    return s.promptLength - tiers.hit(s, limit) * blockSize;
  }

  /** Prompt tokens prefilled by warm-ups so far. */
  long warmedTokens() {
    return warmedTokens;
  }

  /** Warm-ups aborted (their program's next turn came first) before they finished. */
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
   * Queues a warm-up, a prompt prefix with {@code max_tokens} 1 and no one waiting for its answer,
   * as any other request: the ingress sends a warm as an ordinary {@code /v1/completions} request
   * ({@code program.TurnWarmer}), and vLLM schedules it as such ({@code Scheduler.schedule}, {@code
   * vllm/v1/core/sched/scheduler.py}, commit 00024d31): in the waiting queue by its priority (0,
   * the default, here as FCFS), then among the running requests, which go first each pass, its
   * chunked prefill taking what is left of the token budget, up to all of it; its blocks count
   * against the cache and it is preempted as any request is. A real request arriving while a warm
   * prefills waits for the warm's chunks as it would for another request's. A warm-up aborted
   * ({@code cancelled}: its program's next turn arrived, closing its connection) leaves at the next
   * pass, its computed blocks cached, as vLLM frees an aborted request's. It reports no first token
   * and no prefix-cache query. The caller starts a pass if the engine is idle.
   */
  void submitWarm(LabSequence s) {
    s.warm = true;
    submit(s);
  }

  /** Drops the aborted warm-ups, waiting or running: their blocks are freed, cached ones kept. */
  private void dropWarms() {
    waiting.removeIf(
        w -> {
          if (w.warm && w.cancelled) {
            tiers.release(w);
            warmsDropped++;
            return true;
          }
          return false;
        });
    for (int i = running.size() - 1; i >= 0; i--) {
      LabSequence w = running.get(i);
      if (w.warm && w.cancelled) {
        running.remove(i);
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
    dropWarms();
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
        if (!s.warm) { // a warm-up is no request's prefix-cache query
          prefixQueries += s.promptLength;
          prefixHits += (hit + loaded) * blockSize;
          cpuHits += loaded * blockSize;
          uncachedPrefill += s.promptLength - computed;
        }
      }
      if (!tiers.ensureBlocks(s, computed + n)) {
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
      if (s.free) {
        continue; // the +warmfree control: no engine time
      }
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
        }
        if (s.numComputed >= s.numTokens()) {
          s.outputs++;
          if (s.outputs == 1 && s.firstTokenMicros < 0 && !s.warm) {
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
      if (!s.warm) {
        listener.finished(this, s, end);
      }
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
   * The engine dies: every live request but the warm-ups is returned (for a retry elsewhere) and
   * nothing more happens here. Events of the dying pass are dropped.
   */
  List<LabSequence> kill() {
    List<LabSequence> live = new ArrayList<>(running);
    live.addAll(waiting);
    live.removeIf(s -> s.warm);
    running.clear();
    waiting.clear();
    scheduled.clear();
    tiers.dropEvents();
    clock.stop();
    return live;
  }
}

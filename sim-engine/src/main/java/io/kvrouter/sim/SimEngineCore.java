package io.kvrouter.sim;

import io.kvrouter.protocol.engine.EngineEvent;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The simulated vLLM engine core: a continuous-batching scheduler with chunked prefill over a
 * {@link PagedKvCache}, timed by a {@link TimingModel}, with no clock of its own. The caller
 * supplies the time: a real-time loop ({@link RealTimeEngine}) passes the wall clock and sleeps for
 * each pass; a test may pass virtual time and jump ahead. The policy lab does not run this class:
 * its {@code LabEngine} (load-tests) follows the same scheduler in a faster form and is checked
 * against this one by {@code LabEngineTest}.
 *
 * <h2>Use</h2>
 *
 * <pre>{@code
 * SimEngineCore core = new SimEngineCore(SimEngineConfig.defaults());
 * core.submit(SimRequest.of("r1", tokens, 64), now);
 * while (core.hasWork()) {
 *   StepResult pass = core.step(now);     // schedules and executes one pass starting at now
 *   now = pass.endMicros();               // its tokens are ready then
 *   for (Emission e : pass.emissions()) { ... e.first() → TTFT, e.cachedPromptTokens() ... }
 *   for (EngineEvent ev : pass.kvEvents()) { ... BlockStored / BlockRemoved ... }
 * }
 * }</pre>
 *
 * A caller that wants new arrivals to join mid-run submits them with their arrival time before the
 * next {@code step} whose start is at or after it; a pass never starts before the previous one
 * ended (the caller's job: pass {@code max(now, previous end)}).
 *
 * <h2>One pass</h2>
 *
 * Follows vLLM v1's scheduler ({@code vllm/v1/core/sched/scheduler.py}) and the Dynamo mocker's
 * (ai-dynamo/dynamo {@code lib/mocker}):
 *
 * <ol>
 *   <li>running requests first, in admission order, each taking the tokens it still lacks (1 for
 *       decode; the rest of its prompt, capped by the remaining budget, for a chunked prefill);
 *       when its blocks cannot be allocated, the most recently admitted running request is
 *       preempted (recompute mode: blocks released, back to the front of the queue);
 *   <li>then waiting requests FCFS while {@code maxNumSeqs} and the token budget allow: at first
 *       admission the longest cached prefix is looked up (at most {@code promptLength − 1} tokens,
 *       as vLLM always computes the last prompt token; with EAGLE-style speculative decoding,
 *       {@link SimEngineConfig#dropsEagleBlock}, less its last block), counted as computed and
 *       recorded as {@code cachedPromptTokens}; the prefix-cache counters add the prompt length to
 *       queries and the cached tokens to hits; a request whose blocks do not fit waits (head of
 *       line);
 *   <li>as each request is scheduled, the full blocks its tokens of this pass fill get their hashes
 *       registered (announced by BlockStored at the pass's end), as vLLM v1 caches blocks when it
 *       allocates them, so a request admitted later in the same pass hits them;
 *   <li>the pass takes {@code timing.passMicros(uncached tokens computed, decoding requests,
 *       referenced blocks, capacity)};
 *   <li>every request whose tokens are all computed samples one synthetic token; full blocks of
 *       generated tokens get their hashes registered; finished requests release their blocks (the
 *       tail block first, so it is evicted first).
 * </ol>
 *
 * <p>Not thread-safe: one thread owns a core. Cost per pass: O(running requests + blocks
 * allocated), one SHA-256 per newly full block.
 *
 * <p>Where the blocks live (the GPU pool, the window group, the CPU tier) and the events they make
 * are {@link SimKvTiers}'s; a request's tokens, hashes and sampling are its {@link SimSequence}'s;
 * this class is the scheduler over them, plus the counters vLLM's {@code /metrics} exposes.
 */
public final class SimEngineCore {

  /** Receives each pass's KV events (after the pass is planned, with its end time). */
  @FunctionalInterface
  public interface KvEventListener {
    void onEvents(List<EngineEvent> events, long endMicros);
  }

  private final SimEngineConfig config;
  private final SimKvTiers tiers;
  private final VllmBlockHasher hasher;
  private final ArrayDeque<SimSequence> waiting = new ArrayDeque<>();
  private final List<SimSequence> running = new ArrayList<>();
  private final Map<String, SimSequence> live = new HashMap<>();
  private KvEventListener listener = (events, at) -> {};
  private long prefixQueries;
  private long prefixHits;
  private long finishedRequests;
  private long preemptions;

  public SimEngineCore(SimEngineConfig config) {
    this.config = config;
    this.tiers = new SimKvTiers(config);
    this.hasher = new VllmBlockHasher(config.hashSeed());
  }

  /** Sets the hook that sees every pass's KV events (replaces the previous one). */
  public void setKvEventListener(KvEventListener listener) {
    this.listener = java.util.Objects.requireNonNull(listener, "listener");
  }

  public SimEngineConfig config() {
    return config;
  }

  /**
   * Queues a request.
   *
   * @throws IllegalArgumentException when its id is already live, or when prompt plus output could
   *     never fit in the cache (vLLM rejects prompts beyond {@code max_model_len})
   */
  public void submit(SimRequest request, long nowMicros) {
    int blocksNeeded =
        (request.promptTokens().length + request.maxTokens() + config.blockSize() - 1)
            / config.blockSize();
    if (blocksNeeded > config.numBlocks()) {
      throw new IllegalArgumentException(
          "prompt ("
              + request.promptTokens().length
              + ") plus max_tokens ("
              + request.maxTokens()
              + ") exceeds the model's capacity of "
              + maxModelLen()
              + " tokens");
    }
    if (live.containsKey(request.requestId())) {
      throw new IllegalArgumentException("request id already live: " + request.requestId());
    }
    SimSequence seq = new SimSequence(request, nowMicros);
    seq.extendHashes(hasher, config.blockSize());
    live.put(seq.id(), seq);
    waiting.addLast(seq);
  }

  /**
   * Queues a request whose prompt's KV was computed by a prefill engine and transferred here
   * (vLLM's NIXL connector on the decode side: {@code do_remote_prefill}). At its first admission
   * the prompt's blocks this cache lacks are allocated and filled as if computed, and registered
   * (so they are published as stored), leaving only the last prompt token to compute, as vLLM does
   * ({@code vllm/distributed/kv_transfer/kv_connector/v1/nixl/scheduler.py}, {@code
   * get_num_new_matched_tokens}; the scheduler recomputes the last token). The transfer's duration
   * is the caller's to charge before it submits. The cached prompt tokens it reports are those
   * found in this cache.
   */
  public void submitRemotePrefilled(SimRequest request, long nowMicros) {
    submit(request, nowMicros);
    live.get(request.requestId()).remotePrefill = true;
  }

  /**
   * How many full blocks of {@code tokens} (all but the last token, as a transfer would move) this
   * cache lacks: what a remote prefill must transfer here.
   */
  public int missingPrefillBlocks(
      int[] tokens, String cacheSalt, List<io.kvrouter.protocol.keys.MediaPrompt.Item> media) {
    long[] hashes = blockHashes(new SimRequest("probe", tokens, 1, null, cacheSalt, media));
    int full = Math.min(hashes.length, (tokens.length - 1) / config.blockSize());
    return full - tiers.gpu().cachedPrefixBlocks(hashes, full);
  }

  /**
   * The ids of the blocks holding the cached leading full blocks of {@code tokens} (with its salt
   * and images hashed in).
   */
  public int[] cachedPrefixBlockIds(
      int[] tokens, String cacheSalt, List<io.kvrouter.protocol.keys.MediaPrompt.Item> media) {
    long[] hashes = blockHashes(new SimRequest("probe", tokens, 1, null, cacheSalt, media));
    return tiers.cachedPrefixBlockIds(hashes);
  }

  /** Tokens one request may hold at most (capacity × block size). */
  public int maxModelLen() {
    return config.numBlocks() * config.blockSize();
  }

  /**
   * Drops a request (client gone), releasing its blocks. Unknown ids are ignored.
   *
   * @return true when the request was live
   */
  public boolean abort(String requestId) {
    SimSequence seq = live.remove(requestId);
    if (seq == null) {
      return false;
    }
    if (!waiting.remove(seq)) {
      running.remove(seq);
    }
    tiers.release(seq);
    return true;
  }

  /** True when some request is waiting or running. */
  public boolean hasWork() {
    return !live.isEmpty();
  }

  /** Plans and executes one pass starting at {@code nowMicros}. */
  public StepResult step(long nowMicros) {
    int budget = config.maxNumBatchedTokens();
    int loadedThisPass = 0;
    List<SimSequence> scheduled = new ArrayList<>();
    List<Integer> counts = new ArrayList<>();
    boolean preempted = false;

    for (int i = 0; i < running.size() && budget > 0; ) {
      SimSequence seq = running.get(i);
      int n = Math.min(seq.numTokens - seq.numComputed, budget);
      boolean fits = true;
      while (!tiers.ensureBlocks(seq, seq.numComputed + n)) {
        SimSequence victim = running.remove(running.size() - 1);
        preempt(victim);
        preempted = true;
        if (victim == seq) {
          fits = false;
          break;
        }
      }
      if (!fits) {
        break;
      }
      schedule(seq, n, scheduled, counts);
      budget -= n;
      i++;
    }

    while (!preempted && budget > 0 && !waiting.isEmpty() && running.size() < config.maxNumSeqs()) {
      SimSequence seq = waiting.peekFirst();
      int bs = config.blockSize();
      int hit = 0;
      int loaded = 0;
      if (seq.numBlocks == 0) {
        int limit = Math.min((seq.numTokens - 1) / bs, seq.numHashes);
        hit = tiers.hit(seq, limit);
        if (config.dropsEagleBlock() && hit > 0) {
          hit--; // vLLM with EAGLE/MTP: the drafter needs the last matched block recomputed
        }
        loaded = tiers.loadable(seq, hit, limit);
      }
      int computed = (hit + loaded) * bs;
      if (seq.remotePrefill && seq.numBlocks == 0) {
        computed = seq.numTokens - 1; // transferred: only the last prompt token is computed here
      }
      int n = Math.min(seq.numTokens - computed, budget);
      int newBlocks = ceilDiv(computed + n, bs) - hit;
      if (!tiers.fits(seq, hit, newBlocks)) {
        break;
      }
      waiting.pollFirst();
      loadedThisPass += loaded;
      tiers.admit(seq, hit, loaded);
      seq.numComputed = computed;
      seq.numRegistered = hit;
      if (seq.cachedPromptTokens < 0) {
        // Local hits, on GPU or loaded back from CPU; KV pulled from a prefill engine is not one.
        int cached = (hit + loaded) * bs;
        seq.cachedPromptTokens = cached;
        prefixQueries += seq.promptLength;
        prefixHits += cached;
      }
      if (!tiers.ensureBlocks(seq, computed + n)) {
        throw new IllegalStateException("block accounting broken for " + seq.id());
      }
      running.add(seq);
      schedule(seq, n, scheduled, counts);
      budget -= n;
    }

    int prefillTokens = 0;
    int decodeTokens = 0;
    for (int k = 0; k < scheduled.size(); k++) {
      SimSequence seq = scheduled.get(k);
      int n = counts.get(k);
      if (seq.decodes(n)) {
        decodeTokens++;
      } else {
        prefillTokens += n;
      }
    }
    int used = tiers.gpu().usedBlocks();
    long duration =
        scheduled.isEmpty()
            ? 0
            : config.timing().passMicros(prefillTokens, decodeTokens, used, config.numBlocks())
                + loadedThisPass * config.cpuLoadMicrosPerBlock();
    long end = nowMicros + duration;

    List<Emission> emissions = new ArrayList<>();
    int bs = config.blockSize();
    for (int k = 0; k < scheduled.size(); k++) {
      SimSequence seq = scheduled.get(k);
      seq.numComputed += counts.get(k);
      if (seq.prefillDone()) {
        emissions.add(seq.sample(end));
      }
      seq.extendHashes(hasher, bs);
      tiers.registerComputed(seq);
    }
    for (Emission e : emissions) {
      if (e.finished()) {
        SimSequence seq = live.remove(e.requestId());
        running.remove(seq);
        tiers.release(seq);
        finishedRequests++;
      }
    }
    List<EngineEvent> events = tiers.drainEvents();
    if (!events.isEmpty()) {
      listener.onEvents(events, end);
    }
    return new StepResult(nowMicros, duration, emissions, events, prefillTokens, decodeTokens);
  }

  /**
   * vLLM's {@code reset_prefix_cache}: only when no request is live.
   *
   * @return false when requests are live (nothing changes)
   */
  public boolean resetPrefixCache(long nowMicros) {
    List<EngineEvent> cleared = hasWork() ? null : tiers.resetPrefixCache();
    if (cleared == null) {
      return false;
    }
    listener.onEvents(cleared, nowMicros);
    return true;
  }

  /**
   * Puts {@code n} of {@code seq}'s tokens in the pass and caches the blocks they fill at once, as
   * vLLM v1 does when it allocates them ({@code KVCacheManager.allocate_slots} caches up to {@code
   * min(computed + new tokens, request.num_tokens)} before the forward pass, vllm-project/vllm
   * {@code vllm/v1/core/kv_cache_manager.py}): a request admitted later in the same pass finds them
   * as prefix hits, since each attention layer writes the batch's keys and values before attending.
   * vLLM turned such same-step hits off for Mamba layers only (PR #29387, merged November 2025,
   * whose state needs the earlier tokens computed first); a proposal to defer them for attention
   * too (PR #38715) was closed unmerged.
   */
  private void schedule(SimSequence seq, int n, List<SimSequence> scheduled, List<Integer> counts) {
    scheduled.add(seq);
    counts.add(n);
    seq.extendHashes(hasher, config.blockSize());
    tiers.registerThrough(seq, seq.numComputed + n);
  }

  private void preempt(SimSequence seq) {
    tiers.release(seq);
    seq.numComputed = 0;
    seq.numRegistered = 0;
    seq.preemptedOnce = true;
    seq.remotePrefill = false;
    waiting.addFirst(seq);
    preemptions++;
  }

  private static int ceilDiv(int a, int b) {
    return (a + b - 1) / b;
  }

  // ---- observability (vLLM /metrics) ----

  /** {@code vllm:num_requests_running}. */
  public int runningCount() {
    return running.size();
  }

  /** {@code vllm:num_requests_waiting}. */
  public int waitingCount() {
    return waiting.size();
  }

  /** {@code vllm:kv_cache_usage_perc}. */
  public double kvCacheUsage() {
    return tiers.gpu().usage();
  }

  /** {@code vllm:prefix_cache_queries_total} (tokens). */
  public long prefixCacheQueries() {
    return prefixQueries;
  }

  /** Blocks loaded back from the CPU offload tier instead of being computed, since start. */
  public long cpuLoadedBlocks() {
    return tiers.cpuLoadedBlocks();
  }

  /** {@code vllm:prefix_cache_hits_total} (tokens). */
  public long prefixCacheHits() {
    return prefixHits;
  }

  /** Requests finished since start. */
  public long finishedRequests() {
    return finishedRequests;
  }

  /** Preemptions since start. */
  public long preemptions() {
    return preemptions;
  }

  /** A copy of the engine hashes of all cached blocks (what the KV events must describe). */
  public long[] cachedBlockHashes() {
    return tiers.gpu().cachedHashes();
  }

  /** Number of cached blocks. */
  public int cachedBlockCount() {
    return tiers.gpu().cachedCount();
  }

  /** The engine's hash of each full block of {@code tokens} (for tests). */
  public long[] blockHashes(int[] tokens, String loraName, String cacheSalt) {
    return blockHashes(new SimRequest("probe", tokens, 1, loraName, cacheSalt));
  }

  /** The engine's hash of each full block of {@code request}'s prompt. */
  private long[] blockHashes(SimRequest request) {
    SimSequence s = new SimSequence(request, 0);
    s.extendHashes(hasher, config.blockSize());
    return java.util.Arrays.copyOf(s.hashes, s.numHashes);
  }
}

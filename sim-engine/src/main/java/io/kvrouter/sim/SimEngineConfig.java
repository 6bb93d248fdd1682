package io.kvrouter.sim;

import java.util.Locale;
import java.util.Set;

/**
 * Shape of one simulated engine.
 *
 * @param blockSize tokens per KV block (vLLM default 16)
 * @param numBlocks KV cache capacity in blocks
 * @param maxNumSeqs vLLM's {@code max_num_seqs}: running requests at most
 * @param maxNumBatchedTokens vLLM's {@code max_num_batched_tokens}: tokens per pass at most
 *     (prompts longer than this are prefilled in chunks)
 * @param hashSeed the PYTHONHASHSEED-like seed of the engine's block hashes
 * @param timing pass-time model
 * @param cpuBlocks blocks of the CPU offload tier ({@link CpuOffloadTier}); 0 for none, as vLLM
 *     without an offloading connector
 * @param cpuLoadMicrosPerBlock time to load one block back from the CPU tier, added to the pass
 *     that loads it
 * @param slidingWindow 0 for a model with one full-attention cache group; otherwise the window in
 *     tokens of a second, sliding-window group (group 1) beside the full-attention group 0, as a
 *     hybrid model (Gemma 3, gpt-oss) runs in vLLM's hybrid allocator ({@link SlidingWindowGroup})
 * @param speculativeMethod the method of vLLM's {@code --speculative-config}, {@code none} without
 *     speculative decoding; with an EAGLE-style one ({@link #dropsEagleBlock}) every prefix-cache
 *     hit gives up its last matched block, which the request then recomputes. Block hashes and KV
 *     events do not change. Not simulated together with a CPU tier or a sliding window
 */
public record SimEngineConfig(
    int blockSize,
    int numBlocks,
    int maxNumSeqs,
    int maxNumBatchedTokens,
    String hashSeed,
    TimingModel timing,
    int cpuBlocks,
    long cpuLoadMicrosPerBlock,
    int slidingWindow,
    String speculativeMethod) {

  /**
   * vLLM's {@code SpeculativeConfig.use_eagle()} methods (vllm-project/vllm at 002e77c1, {@code
   * vllm/config/speculative.py}): their drafter needs the target's hidden states of the last
   * matched block, so the KV cache manager drops that block from every cache hit ({@code
   * vllm/v1/core/single_type_kv_cache_manager.py} at 002f3491 and 129ab7c6, {@code
   * FullAttentionManager.find_longest_cache_hit}: {@code if use_eagle and computed_blocks: pop()},
   * since PR #17137). The hashes stay vLLM's plain ones ({@link VllmBlockHasher}).
   */
  private static final Set<String> EAGLE_STYLE =
      Set.of("eagle", "eagle3", "mtp", "dflash", "dspark");

  /** Methods vLLM accepts whose prefix-cache hits are unchanged. */
  private static final Set<String> OTHER_METHODS =
      Set.of("none", "ngram", "ngram_gpu", "draft_model", "medusa", "mlp_speculator", "suffix");

  /** An engine with one full-attention cache group and no CPU tier. */
  public SimEngineConfig(
      int blockSize, int blocks, int seqs, int batched, String seed, TimingModel timing) {
    this(blockSize, blocks, seqs, batched, seed, timing, 0, 0, 0, "none");
  }

  public SimEngineConfig {
    require(blockSize, "blockSize");
    require(numBlocks, "numBlocks");
    require(maxNumSeqs, "maxNumSeqs");
    require(maxNumBatchedTokens, "maxNumBatchedTokens");
    java.util.Objects.requireNonNull(hashSeed, "hashSeed");
    java.util.Objects.requireNonNull(timing, "timing");
    if (cpuBlocks < 0 || cpuLoadMicrosPerBlock < 0) {
      throw new IllegalArgumentException("cpuBlocks and cpuLoadMicrosPerBlock must be >= 0");
    }
    if (slidingWindow < 0) {
      throw new IllegalArgumentException("slidingWindow must be >= 0, was " + slidingWindow);
    }
    speculativeMethod =
        speculativeMethod == null || speculativeMethod.isBlank()
            ? "none"
            : speculativeMethod.trim().toLowerCase(Locale.ROOT);
    if (speculativeMethod.endsWith("_mtp")) {
      speculativeMethod = "mtp"; // vLLM renames deepseek_mtp, qwen3_next_mtp, ... to mtp
    }
    if (!EAGLE_STYLE.contains(speculativeMethod) && !OTHER_METHODS.contains(speculativeMethod)) {
      throw new IllegalArgumentException(
          "speculative method must be one of none, eagle, eagle3, mtp, dflash, dspark, ngram,"
              + " ngram_gpu, draft_model, medusa, mlp_speculator, suffix; was "
              + speculativeMethod);
    }
    if (EAGLE_STYLE.contains(speculativeMethod) && (cpuBlocks > 0 || slidingWindow > 0)) {
      throw new IllegalArgumentException(
          "speculative method "
              + speculativeMethod
              + " is not simulated with a CPU tier or a sliding window");
    }
  }

  /** True when every prefix-cache hit gives up its last matched block (EAGLE-style drafter). */
  public boolean dropsEagleBlock() {
    return EAGLE_STYLE.contains(speculativeMethod);
  }

  /** The same engine running speculative decoding with {@code method} ({@code none}: off). */
  public SimEngineConfig withSpeculativeMethod(String method) {
    return new SimEngineConfig(
        blockSize,
        numBlocks,
        maxNumSeqs,
        maxNumBatchedTokens,
        hashSeed,
        timing,
        cpuBlocks,
        cpuLoadMicrosPerBlock,
        slidingWindow,
        method);
  }

  private static void require(int v, String name) {
    if (v < 1) {
      throw new IllegalArgumentException(name + " must be positive, was " + v);
    }
  }

  /**
   * vLLM-like defaults: block 16, 16,384 blocks, 256 sequences, 8,192 batched tokens, seed "0", the
   * Dynamo mocker timing at speed-up 1.
   */
  public static SimEngineConfig defaults() {
    return new SimEngineConfig(16, 16_384, 256, 8_192, "0", new MockerTimingModel(1.0));
  }

  public SimEngineConfig withNumBlocks(int n) {
    return withShape(blockSize, n, maxNumSeqs, maxNumBatchedTokens);
  }

  public SimEngineConfig withBlockSize(int n) {
    return withShape(n, numBlocks, maxNumSeqs, maxNumBatchedTokens);
  }

  public SimEngineConfig withLimits(int seqs, int batchedTokens) {
    return withShape(blockSize, numBlocks, seqs, batchedTokens);
  }

  public SimEngineConfig withTiming(TimingModel t) {
    return withExtras(hashSeed, t, cpuBlocks, cpuLoadMicrosPerBlock, slidingWindow);
  }

  public SimEngineConfig withHashSeed(String seed) {
    return withExtras(seed, timing, cpuBlocks, cpuLoadMicrosPerBlock, slidingWindow);
  }

  /** The same engine with a CPU offload tier of {@code blocks} blocks. */
  public SimEngineConfig withCpuTier(int blocks, long loadMicrosPerBlock) {
    return withExtras(hashSeed, timing, blocks, loadMicrosPerBlock, slidingWindow);
  }

  /**
   * The same engine with a sliding-window group of {@code tokens} tokens beside group 0 (0 = none).
   */
  public SimEngineConfig withSlidingWindow(int tokens) {
    return withExtras(hashSeed, timing, cpuBlocks, cpuLoadMicrosPerBlock, tokens);
  }

  /** The same engine with other block size, capacity and limits (the first four components). */
  private SimEngineConfig withShape(int bs, int blocks, int seqs, int batched) {
    long cpuLoad = cpuLoadMicrosPerBlock;
    return new SimEngineConfig(
        bs,
        blocks,
        seqs,
        batched,
        hashSeed,
        timing,
        cpuBlocks,
        cpuLoad,
        slidingWindow,
        speculativeMethod);
  }

  /** The same shape with other hash seed, timing, CPU tier and window (the last five). */
  private SimEngineConfig withExtras(
      String seed, TimingModel t, int cpu, long cpuLoadMicros, int window) {
    return new SimEngineConfig(
        blockSize,
        numBlocks,
        maxNumSeqs,
        maxNumBatchedTokens,
        seed,
        t,
        cpu,
        cpuLoadMicros,
        window,
        speculativeMethod);
  }
}

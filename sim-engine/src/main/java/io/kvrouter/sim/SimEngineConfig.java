package io.kvrouter.sim;

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
    int slidingWindow) {

  /** An engine with one full-attention cache group and no CPU tier. */
  public SimEngineConfig(
      int blockSize, int blocks, int seqs, int batched, String seed, TimingModel timing) {
    this(blockSize, blocks, seqs, batched, seed, timing, 0, 0, 0);
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
        bs, blocks, seqs, batched, hashSeed, timing, cpuBlocks, cpuLoad, slidingWindow);
  }

  /** The same shape with other hash seed, timing, CPU tier and window (the last five). */
  private SimEngineConfig withExtras(
      String seed, TimingModel t, int cpu, long cpuLoadMicros, int window) {
    return new SimEngineConfig(
        blockSize, numBlocks, maxNumSeqs, maxNumBatchedTokens, seed, t, cpu, cpuLoadMicros, window);
  }
}

package io.kvrouter.tracker.policy;

import java.util.function.Consumer;

/**
 * Parameters of all policies. Defaults follow each baseline's shipped defaults (each baseline's
 * class comment names the source and version); those of the {@code kvrouter} policy are starting
 * points for the policy lab to tune.
 *
 * @param gpuCredit credit of a cached GPU block (1.0)
 * @param predictedCredit credit of a predicted block (reserved, not yet confirmed by the engine)
 * @param cpuCredit credit of a CPU-tier block (0.75, as Dynamo's host tier)
 * @param diskCredit credit of a disk-tier block (0.25, as Dynamo's disk tier)
 * @param prefillQuadraticTokens kvrouter: prefill cost of x tokens is x·(1 + x/this), the shape of
 *     the Dynamo mocker's prefill model (1.518e-2·x + 4.21e-7·x², ratio ≈ 36,000 tokens)
 * @param decodeWeight kvrouter: cost per token of KV held by decoding requests
 * @param busyKvUsage kvrouter: a replica at or above this engine-reported KV usage is busy
 * @param busyWaiting kvrouter: a replica with this many engine-reported waiting requests is busy
 * @param maxInFlight kvrouter: a replica with this many reserved requests is busy
 * @param tieRelative kvrouter: costs within this fraction of the best are near-ties
 * @param tieAbsoluteTokens kvrouter: costs within this many token-equivalents are near-ties
 * @param temperature kvrouter: softmax temperature over near-ties, relative to the tie band
 * @param chwblLoadFactor chwbl: load bound factor (KubeAI's mean load percentage 125)
 * @param chwblPrefixBlocks chwbl: leading prompt blocks that stand for KubeAI's 100-character
 *     prefix (2: about 25 tokens at 4 characters a token, rounded up to 16-token blocks)
 * @param chwblVirtualNodes chwbl: ring points per replica (KubeAI's replication 256)
 * @param sglangBalanceAbs sglang: balance_abs_threshold (64 in SMG; 32 in the old sgl-router)
 * @param sglangBalanceRel sglang: balance_rel_threshold (1.5; 1.0001 in v0.4)
 * @param sglangCacheThreshold sglang: cache_threshold (0.3; 0.5 in v0.4)
 * @param sglangMaxBlocksPerWorker sglang: approximate tree size per worker before LRU eviction
 *     (SMG's max_tree_size 2^26 characters, taken as tokens, in 16-token blocks)
 * @param dynamoOverlapWeight dynamo: overlap_score_weight (1.0)
 * @param dynamoTemperature dynamo: router_temperature (0 = argmin)
 * @param llmdPrefixWeight llm-d: precise prefix scorer weight (2.0)
 * @param llmdKvWeight llm-d: KV-cache utilisation scorer weight (1.0)
 * @param llmdQueueWeight llm-d: queue scorer weight (1.0)
 * @param kvrouter kvrouter: the predicted-TTFT policy's own parameters ({@link KvRouterConfig})
 * @param cpuLoadMicrosPerToken kvrouter: time to load one token's KV back from a replica's CPU
 *     tier, µs; the predicted-TTFT policy counts a CPU-held block as cached and charges it this
 *     (not its prefill, not zero). Default 4.16: 131,072 bytes of KV per token (Llama-3.1-8B: 2 ×
 *     32 layers × 8 KV heads × 128 dimensions × 2 bytes) over PCIe 4.0 x16's 31.5 GB/s, 67 µs per
 *     16-token block, the lab engine's default load time
 */
public record PolicyConfig(
    double gpuCredit,
    double predictedCredit,
    double cpuCredit,
    double diskCredit,
    double prefillQuadraticTokens,
    double decodeWeight,
    double busyKvUsage,
    int busyWaiting,
    int maxInFlight,
    double tieRelative,
    double tieAbsoluteTokens,
    double temperature,
    double chwblLoadFactor,
    int chwblPrefixBlocks,
    int chwblVirtualNodes,
    int sglangBalanceAbs,
    double sglangBalanceRel,
    double sglangCacheThreshold,
    int sglangMaxBlocksPerWorker,
    double dynamoOverlapWeight,
    double dynamoTemperature,
    double llmdPrefixWeight,
    double llmdKvWeight,
    double llmdQueueWeight,
    KvRouterConfig kvrouter,
    double cpuLoadMicrosPerToken) {

  /** KV bytes per token over PCIe 4.0 x16 bandwidth, µs: see {@code cpuLoadMicrosPerToken}. */
  public static final double DEFAULT_CPU_LOAD_MICROS_PER_TOKEN = 4.16; // 131,072 B / 31.5 GB/s

  public PolicyConfig {
    if (!(cpuLoadMicrosPerToken >= 0)) {
      throw new IllegalArgumentException(
          "cpuLoadMicrosPerToken must be >= 0, was " + cpuLoadMicrosPerToken);
    }
  }

  /** The defaults described above. */
  public static PolicyConfig defaults() {
    return new PolicyConfig(
        1.0,
        0.9,
        0.75,
        0.25,
        36_000,
        0.05,
        0.97,
        64,
        512,
        0.05,
        64,
        1.0,
        1.25,
        2,
        256,
        64,
        1.5,
        0.3,
        1 << 22,
        1.0,
        0.0,
        2.0,
        1.0,
        1.0,
        KvRouterConfig.defaults(),
        DEFAULT_CPU_LOAD_MICROS_PER_TOKEN);
  }

  /**
   * Whether {@code replica} is over a busy threshold: engine-reported KV usage at {@code
   * busyKvUsage}, engine-reported queue at {@code busyWaiting}, or reservations at {@code
   * maxInFlight}.
   */
  public boolean busy(io.kvrouter.tracker.ledger.LoadView load, int replica) {
    return load.kvUsage(replica) >= busyKvUsage
        || load.waiting(replica) >= busyWaiting
        || load.inFlight(replica) >= maxInFlight;
  }

  /**
   * The same parameters with near-tie randomisation switched off: no tie band, and exact ties go to
   * the first candidate, so routers on the same state all pick the same replica (the herding
   * baseline of the burst test); for {@code kvrouter}, concurrency {@code off} and no intents.
   */
  public PolicyConfig withoutNearTieRandomisation() {
    return with(
        b -> {
          b.tieRelative = 0.0;
          b.tieAbsoluteTokens = 0.0;
          b.temperature = 0.0;
          b.kvrouter = kvrouter.withConcurrency("off").with("intents=false");
        });
  }

  /** The same parameters with another CPU-tier load time (see {@code cpuLoadMicrosPerToken}). */
  public PolicyConfig withCpuLoadMicrosPerToken(double micros) {
    return with(b -> b.cpuLoadMicrosPerToken = micros);
  }

  /** The same parameters with kvrouter's own replaced by {@code k}. */
  public PolicyConfig withKvRouter(KvRouterConfig k) {
    return with(b -> b.kvrouter = k);
  }

  /**
   * The same parameters with other busy thresholds (see {@link #busy}): what an operator sets to
   * make the router hold requests in its own queue (where priorities and tenant fairness apply)
   * rather than in the engines' queues.
   */
  public PolicyConfig withBusyThresholds(double kvUsage, int waiting, int inFlight) {
    if (!(kvUsage > 0) || waiting < 1 || inFlight < 1) {
      throw new IllegalArgumentException(
          "busy thresholds must be positive: kv usage "
              + kvUsage
              + ", waiting "
              + waiting
              + ", in flight "
              + inFlight);
    }
    return with(
        b -> {
          b.busyKvUsage = kvUsage;
          b.busyWaiting = waiting;
          b.maxInFlight = inFlight;
        });
  }

  /** True when ties are broken deterministically (see {@link #withoutNearTieRandomisation()}). */
  public boolean deterministicTies() {
    return tieRelative == 0 && tieAbsoluteTokens == 0 && temperature == 0;
  }

  /** Credit-weighted cached blocks of {@code replica} in {@code match}. */
  double cachedBlocks(io.kvrouter.tracker.index.MatchResult match, int replica) {
    return gpuCredit * match.gpu(replica)
        + predictedCredit * match.predicted(replica)
        + cpuCredit * match.cpu(replica)
        + diskCredit * match.disk(replica);
  }

  /**
   * Cached blocks of {@code replica} as the predicted-TTFT policy counts them: a block reloaded
   * from the CPU tier is not computed (its load time is charged apart, {@link #cpuLoadMillis});
   * GPU, predicted and disk blocks by their credits.
   */
  double cachedBlocksLoadingCpu(io.kvrouter.tracker.index.MatchResult match, int replica) {
    return gpuCredit * match.gpu(replica)
        + predictedCredit * match.predicted(replica)
        + match.cpu(replica)
        + diskCredit * match.disk(replica);
  }

  /** Milliseconds to load {@code replica}'s CPU-held blocks of the match back to GPU. */
  double cpuLoadMillis(io.kvrouter.tracker.index.MatchResult match, int replica, int blockSize) {
    return match.cpu(replica) * (double) blockSize * cpuLoadMicrosPerToken / 1000.0;
  }

  /** Returns a copy with {@code change} applied to the builder of its components. */
  private PolicyConfig with(Consumer<Builder> change) {
    Builder b = new Builder(this);
    change.accept(b);
    return b.build();
  }

  /** The components of a {@link PolicyConfig} to change one or a few, as the withers do. */
  private static final class Builder {
    private double gpuCredit;
    private double predictedCredit;
    private double cpuCredit;
    private double diskCredit;
    private double prefillQuadraticTokens;
    private double decodeWeight;
    private double busyKvUsage;
    private int busyWaiting;
    private int maxInFlight;
    private double tieRelative;
    private double tieAbsoluteTokens;
    private double temperature;
    private double chwblLoadFactor;
    private int chwblPrefixBlocks;
    private int chwblVirtualNodes;
    private int sglangBalanceAbs;
    private double sglangBalanceRel;
    private double sglangCacheThreshold;
    private int sglangMaxBlocksPerWorker;
    private double dynamoOverlapWeight;
    private double dynamoTemperature;
    private double llmdPrefixWeight;
    private double llmdKvWeight;
    private double llmdQueueWeight;
    private KvRouterConfig kvrouter;
    private double cpuLoadMicrosPerToken;

    private Builder(PolicyConfig c) {
      gpuCredit = c.gpuCredit;
      predictedCredit = c.predictedCredit;
      cpuCredit = c.cpuCredit;
      diskCredit = c.diskCredit;
      prefillQuadraticTokens = c.prefillQuadraticTokens;
      decodeWeight = c.decodeWeight;
      busyKvUsage = c.busyKvUsage;
      busyWaiting = c.busyWaiting;
      maxInFlight = c.maxInFlight;
      tieRelative = c.tieRelative;
      tieAbsoluteTokens = c.tieAbsoluteTokens;
      temperature = c.temperature;
      chwblLoadFactor = c.chwblLoadFactor;
      chwblPrefixBlocks = c.chwblPrefixBlocks;
      chwblVirtualNodes = c.chwblVirtualNodes;
      sglangBalanceAbs = c.sglangBalanceAbs;
      sglangBalanceRel = c.sglangBalanceRel;
      sglangCacheThreshold = c.sglangCacheThreshold;
      sglangMaxBlocksPerWorker = c.sglangMaxBlocksPerWorker;
      dynamoOverlapWeight = c.dynamoOverlapWeight;
      dynamoTemperature = c.dynamoTemperature;
      llmdPrefixWeight = c.llmdPrefixWeight;
      llmdKvWeight = c.llmdKvWeight;
      llmdQueueWeight = c.llmdQueueWeight;
      kvrouter = c.kvrouter;
      cpuLoadMicrosPerToken = c.cpuLoadMicrosPerToken;
    }

    private PolicyConfig build() {
      return new PolicyConfig(
          gpuCredit,
          predictedCredit,
          cpuCredit,
          diskCredit,
          prefillQuadraticTokens,
          decodeWeight,
          busyKvUsage,
          busyWaiting,
          maxInFlight,
          tieRelative,
          tieAbsoluteTokens,
          temperature,
          chwblLoadFactor,
          chwblPrefixBlocks,
          chwblVirtualNodes,
          sglangBalanceAbs,
          sglangBalanceRel,
          sglangCacheThreshold,
          sglangMaxBlocksPerWorker,
          dynamoOverlapWeight,
          dynamoTemperature,
          llmdPrefixWeight,
          llmdKvWeight,
          llmdQueueWeight,
          kvrouter,
          cpuLoadMicrosPerToken);
    }
  }
}

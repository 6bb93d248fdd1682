package io.kvrouter.loadtest.workload;

/**
 * Counts prefix-cache hits at trace-block granularity for a given replica choice per request, with
 * no engine involved: the measure behind the published Mooncake figures and the lab's {@code
 * block_hit_rate}, {@code single_cache_block_hit_rate} and {@code single_cache_hit_rate}.
 *
 * <p>Definition (the one that reproduces the figures published with the Mooncake traces, listed in
 * the bundled traces' README, {@code load-tests/src/main/resources/io/kvrouter/loadtest/traces/};
 * see {@link PrefixCacheBound}): for each recorded request, in the order recorded,
 *
 * <ol>
 *   <li>matched = the number of leading block ids of the request already held by the chosen replica
 *       (the lookup happens <em>before</em> the request's own blocks are added, so a request never
 *       hits itself, and it stops at the first id not held);
 *   <li>then all the request's block ids are added to that replica (bounded replicas evict least
 *       recently used ids, prefix tails first).
 * </ol>
 *
 * {@code block_hit_rate} = Σ matched ÷ Σ blocks. The token-weighted rate counts {@code min(matched
 * × blockTokens, inputLength)} cached tokens per request (a matched last block is the truncated
 * one, hence the cap) over Σ inputLength.
 *
 * <p>Cost: O(blocks of the request) expected per {@link #record}; memory per {@link
 * ReplicaBlockSet}. Not thread-safe: one counter per run.
 */
public final class BlockHitCounter {

  private final Workload workload;
  private final boolean deriveIds;
  private final int blockTokens;
  private final ReplicaBlockSet[] replicas;
  private long requests;
  private long matchedBlocks;
  private long totalBlocks;
  private long cachedTokens;
  private long promptTokens;

  /**
   * A counter over a trace workload's {@link WorkloadRequest#traceBlockIds()}.
   *
   * @param replicas number of replicas (caches), at least 1
   * @param capacityBlocksPerReplica maximum block ids per replica, 0 for unlimited
   * @throws IllegalArgumentException if the workload has no trace block ids
   */
  public BlockHitCounter(Workload workload, int replicas, int capacityBlocksPerReplica) {
    this(workload, false, workload.blockTokens(), replicas, capacityBlocksPerReplica);
    if (workload.blockTokens() == 0) {
      throw new IllegalArgumentException(
          "workload "
              + workload.name()
              + " carries no trace block ids; use"
              + " derivingBlockIds(workload, blockTokens, ...)");
    }
  }

  /**
   * A counter over any workload that ignores trace ids and derives chained ids of {@code
   * blockTokens}-token blocks from each prompt's tokens ({@link ChainedBlockIds}); each {@link
   * #record(int, int)} then costs O(prompt tokens).
   */
  public static BlockHitCounter derivingBlockIds(
      Workload workload, int blockTokens, int replicas, int capacityBlocksPerReplica) {
    if (blockTokens <= 0) {
      throw new IllegalArgumentException("blockTokens must be positive, got " + blockTokens);
    }
    return new BlockHitCounter(workload, true, blockTokens, replicas, capacityBlocksPerReplica);
  }

  /**
   * A counter fed with explicit block ids through {@link #record(long[], int, int)}.
   *
   * @param blockTokens tokens per block id
   */
  public BlockHitCounter(int blockTokens, int replicas, int capacityBlocksPerReplica) {
    this(null, false, blockTokens, replicas, capacityBlocksPerReplica);
    if (blockTokens <= 0) {
      throw new IllegalArgumentException("blockTokens must be positive, got " + blockTokens);
    }
  }

  private BlockHitCounter(
      Workload workload,
      boolean deriveIds,
      int blockTokens,
      int replicas,
      int capacityBlocksPerReplica) {
    if (replicas < 1) {
      throw new IllegalArgumentException("need at least one replica, got " + replicas);
    }
    this.workload = workload;
    this.deriveIds = deriveIds;
    this.blockTokens = blockTokens;
    this.replicas = new ReplicaBlockSet[replicas];
    for (int i = 0; i < replicas; i++) {
      this.replicas[i] = new ReplicaBlockSet(capacityBlocksPerReplica);
    }
  }

  /**
   * Records that request {@code requestIndex} of the workload went to {@code replica}.
   *
   * @return the number of leading blocks that replica already held
   */
  public int record(int requestIndex, int replica) {
    if (workload == null) {
      throw new IllegalStateException(
          "this counter has no workload; use record(blockIds, inputLength, replica)");
    }
    WorkloadRequest r = workload.get(requestIndex);
    return record(blockIds(r), r.inputLength(), replica);
  }

  /**
   * Records a request with these chained block ids and prompt length sent to {@code replica}.
   *
   * @return the number of leading blocks that replica already held
   */
  public int record(long[] blockIds, int inputLength, int replica) {
    ReplicaBlockSet cache = cache(replica);
    int matched = cache.leadingMatch(blockIds);
    cache.insert(blockIds);
    requests++;
    matchedBlocks += matched;
    totalBlocks += blockIds.length;
    cachedTokens += Math.min((long) matched * blockTokens, inputLength);
    promptTokens += inputLength;
    return matched;
  }

  /** Leading blocks of {@code blockIds} that {@code replica} holds now; changes nothing. */
  public int peek(long[] blockIds, int replica) {
    return cache(replica).leadingMatch(blockIds);
  }

  /**
   * Leading blocks of workload request {@code requestIndex} that {@code replica} holds now; changes
   * nothing.
   */
  public int peek(int requestIndex, int replica) {
    if (workload == null) {
      throw new IllegalStateException("this counter has no workload; use peek(blockIds, replica)");
    }
    return peek(blockIds(workload.get(requestIndex)), replica);
  }

  /** Tokens per block id this counter assumes. */
  public int blockTokens() {
    return blockTokens;
  }

  private long[] blockIds(WorkloadRequest r) {
    return deriveIds ? ChainedBlockIds.of(r.prompt(), blockTokens) : r.traceBlockIds();
  }

  /** Block ids {@code replica} holds now. */
  public int heldBlocks(int replica) {
    return cache(replica).size();
  }

  /** Number of replicas. */
  public int replicaCount() {
    return replicas.length;
  }

  /** Totals and rates so far. */
  public HitRates rates() {
    return new HitRates(requests, matchedBlocks, totalBlocks, cachedTokens, promptTokens);
  }

  private ReplicaBlockSet cache(int replica) {
    if (replica < 0 || replica >= replicas.length) {
      throw new IllegalArgumentException(
          "replica " + replica + " outside [0, " + replicas.length + ")");
    }
    return replicas[replica];
  }
}

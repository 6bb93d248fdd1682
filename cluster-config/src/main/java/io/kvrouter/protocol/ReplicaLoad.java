package io.kvrouter.protocol;

/**
 * A load heartbeat of one replica, scraped by its agent from the engine's {@code /metrics}.
 *
 * @param replicaId the routable target
 * @param epoch the agent's epoch for that replica
 * @param running {@code vllm:num_requests_running}
 * @param waiting {@code vllm:num_requests_waiting}
 * @param kvUsage {@code vllm:kv_cache_usage_perc}, 0 to 1
 * @param prefixQueries {@code vllm:prefix_cache_queries_total} (tokens)
 * @param prefixHits {@code vllm:prefix_cache_hits_total} (tokens)
 * @param timestampMillis when the agent scraped it (agent wall clock)
 * @param lastSeq the last KV event batch seq the agent published in {@code epoch} (-1 for none): a
 *     tracker behind it missed batches, even when no later batch comes to show the gap
 */
public record ReplicaLoad(
    String replicaId,
    long epoch,
    int running,
    int waiting,
    double kvUsage,
    long prefixQueries,
    long prefixHits,
    long timestampMillis,
    long lastSeq)
    implements KryoWire {

  /** A heartbeat that says nothing about the event stream. */
  public ReplicaLoad(
      String replicaId,
      long epoch,
      int running,
      int waiting,
      double kvUsage,
      long prefixQueries,
      long prefixHits,
      long timestampMillis) {
    this(
        replicaId,
        epoch,
        running,
        waiting,
        kvUsage,
        prefixQueries,
        prefixHits,
        timestampMillis,
        -1L);
  }
}

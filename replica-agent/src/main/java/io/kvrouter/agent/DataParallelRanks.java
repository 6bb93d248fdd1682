package io.kvrouter.agent;

import java.util.ArrayList;
import java.util.List;

/**
 * One engine with N data-parallel ranks becomes N replicas, one per rank: the same replica id and
 * base URL, rank {@code start + k}, and each rank's own KV-event endpoints.
 *
 * <p>Why N routable targets and not one replica with ranks inside: a vLLM engine started with data
 * parallelism runs one engine core, scheduler and KV cache per rank, and each rank publishes its
 * own event stream with its own sequence numbers and replay buffer (vllm-project/vllm {@code
 * vllm/distributed/kv_events.py}: "each DP rank creates a separate publisher", batches carry {@code
 * data_parallel_rank}). A rank is therefore exactly what the tracker already calls a replica: a
 * cache with one ordered, replayable stream. Mapping a rank to a target keeps the event plane, the
 * epochs, the digests, the consistency view and the load ledger unchanged; only the proxy needs to
 * know that two targets share a URL, and it says which rank with vLLM's {@code
 * X-data-parallel-rank} header.
 *
 * <p>Endpoints: vLLM binds rank {@code r}'s PUB and replay sockets at the configured ports plus
 * {@code r} ({@code ZmqEventPublisher.offset_endpoint_port}, same file), so the agent subscribes to
 * the configured endpoints offset the same way.
 */
public final class DataParallelRanks {

  private DataParallelRanks() {}

  /**
   * The replicas of {@code engine}'s ranks {@code engine.dpRank()} to {@code engine.dpRank() +
   * localRanks - 1}, for an engine of {@code dpSize} ranks in all.
   *
   * @param engine the engine as configured (its endpoints are rank 0's)
   * @param localRanks ranks of this engine the agent serves (≥ 1)
   * @param dpSize ranks of the engine in all (≥ localRanks)
   */
  public static List<ReplicaSpec> expand(ReplicaSpec engine, int localRanks, int dpSize) {
    if (localRanks < 1 || dpSize < localRanks) {
      throw new IllegalArgumentException(
          "need 1 <= local ranks (" + localRanks + ") <= data-parallel size (" + dpSize + ")");
    }
    List<ReplicaSpec> out = new ArrayList<>(localRanks);
    for (int k = 0; k < localRanks; k++) {
      int rank = engine.dpRank() + k;
      out.add(
          new ReplicaSpec(
              engine.replicaId(),
              rank,
              engine.model(),
              engine.baseUrl(),
              engine.blockSize(),
              offsetPort(engine.kvEventsEndpoint(), rank),
              offsetPort(engine.replayEndpoint(), rank),
              engine.topicFilter(),
              engine.role(),
              dpSize));
    }
    return List.copyOf(out);
  }

  /**
   * vLLM's {@code offset_endpoint_port}: a TCP endpoint's port plus {@code rank}; {@code inproc}
   * endpoints get {@code _dp<rank>}; rank 0 and null are unchanged.
   */
  public static String offsetPort(String endpoint, int rank) {
    if (endpoint == null || rank == 0) {
      return endpoint;
    }
    if (endpoint.contains("inproc")) {
      return endpoint + "_dp" + rank;
    }
    int colon = endpoint.lastIndexOf(':');
    if (!endpoint.contains("tcp") || colon < 0) {
      return endpoint;
    }
    int port = Integer.parseInt(endpoint.substring(colon + 1));
    return endpoint.substring(0, colon + 1) + (port + rank);
  }
}

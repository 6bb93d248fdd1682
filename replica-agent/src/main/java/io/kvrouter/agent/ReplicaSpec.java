package io.kvrouter.agent;

import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.Tier;
import java.util.List;

/**
 * One replica an agent serves.
 *
 * @param replicaId unique in the cluster
 * @param dpRank data-parallel rank (0 for a single-rank engine)
 * @param model served model name
 * @param baseUrl the engine's OpenAI base URL, e.g. {@code http://127.0.0.1:8000}
 * @param blockSize the engine's KV block size
 * @param kvEventsEndpoint the engine's ZMQ PUB endpoint, or null: approximate mode (no events;
 *     trackers rely on predicted entries)
 * @param replayEndpoint the engine's ZMQ replay endpoint, or null
 * @param topicFilter ZMQ SUB prefix filter ("" for all)
 * @param role {@code both}, {@code prefill} or {@code decode} ({@code ReplicaInfo.role})
 * @param dpSize data-parallel ranks of the engine (1 without data parallelism); one spec per rank
 *     ({@link DataParallelRanks})
 */
public record ReplicaSpec(
    String replicaId,
    int dpRank,
    String model,
    String baseUrl,
    int blockSize,
    String kvEventsEndpoint,
    String replayEndpoint,
    String topicFilter,
    String role,
    int dpSize) {

  /** A replica of an engine without data parallelism, prefilling and decoding. */
  public ReplicaSpec(
      String replicaId,
      int dpRank,
      String model,
      String baseUrl,
      int blockSize,
      String kvEventsEndpoint,
      String replayEndpoint,
      String topicFilter) {
    this(
        replicaId,
        dpRank,
        model,
        baseUrl,
        blockSize,
        kvEventsEndpoint,
        replayEndpoint,
        topicFilter,
        ReplicaInfo.BOTH,
        1);
  }

  public ReplicaSpec {
    java.util.Objects.requireNonNull(replicaId, "replicaId");
    java.util.Objects.requireNonNull(model, "model");
    java.util.Objects.requireNonNull(baseUrl, "baseUrl");
    baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
    topicFilter = topicFilter == null ? "" : topicFilter;
    role = role == null ? ReplicaInfo.BOTH : role;
    dpSize = Math.max(1, dpSize);
  }

  /** The same replica announced with {@code newRole}. */
  public ReplicaSpec withRole(String newRole) {
    return new ReplicaSpec(
        replicaId,
        dpRank,
        model,
        baseUrl,
        blockSize,
        kvEventsEndpoint,
        replayEndpoint,
        topicFilter,
        newRole,
        dpSize);
  }

  /** True when the engine publishes KV events. */
  public boolean kvEvents() {
    return kvEventsEndpoint != null;
  }

  /** What the agent announces for this replica before it learned the engine's APIs. */
  public ReplicaInfo info() {
    return info(List.of());
  }

  /** What the agent announces for this replica, whose engine serves {@code apis}. */
  public ReplicaInfo info(List<String> apis) {
    return info(apis, List.of());
  }

  /**
   * What the agent announces for this replica, whose engine serves {@code apis} and the LoRA
   * adapters {@code adapters}.
   */
  public ReplicaInfo info(List<String> apis, List<String> adapters) {
    return new ReplicaInfo(
        replicaId,
        dpRank,
        model,
        baseUrl,
        blockSize,
        List.of(Tier.GPU),
        role,
        kvEvents(),
        true,
        apis,
        dpSize,
        adapters);
  }
}

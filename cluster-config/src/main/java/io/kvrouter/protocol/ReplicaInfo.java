package io.kvrouter.protocol;

import java.util.List;
import java.util.Objects;

/**
 * What an agent announces about one replica it serves. Low rate, so it travels as CBOR.
 *
 * @param replicaId the engine instance's id, unique in the cluster
 * @param dpRank data-parallel rank inside that engine (0 when the engine has one rank)
 * @param model the served model name (as in {@code /v1/models})
 * @param baseUrl the engine's OpenAI-compatible base URL, e.g. {@code http://10.0.0.5:8000}
 * @param blockSize tokens per KV block; must equal the engine's
 * @param tiers tiers the replica reports blocks in
 * @param role {@code both}, {@code prefill} or {@code decode} (disaggregation, later)
 * @param kvEvents false in approximate mode (engine publishes no KV events)
 * @param acceptsTokenIds true when the engine takes a token-id prompt on /v1/completions
 */
public record ReplicaInfo(
    String replicaId,
    int dpRank,
    String model,
    String baseUrl,
    int blockSize,
    List<Tier> tiers,
    String role,
    boolean kvEvents,
    boolean acceptsTokenIds)
    implements CborWire {

  public ReplicaInfo {
    Objects.requireNonNull(replicaId, "replicaId");
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(baseUrl, "baseUrl");
    if (blockSize <= 0) {
      throw new IllegalArgumentException("blockSize must be positive, was " + blockSize);
    }
    tiers = List.copyOf(tiers);
    role = role == null ? "both" : role;
  }

  /** The routable target: {@code replicaId} for rank 0, {@code replicaId#rank} otherwise. */
  public String targetId() {
    return dpRank == 0 ? replicaId : replicaId + "#" + dpRank;
  }
}

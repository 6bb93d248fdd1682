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
 * @param apis the API paths the engine serves besides the OpenAI chat and completions ones, as its
 *     agent learned them from the engine (e.g. {@code /v1/messages}, {@code /v1/responses}); empty
 *     when unknown, and then the ingress speaks chat to it
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
    boolean acceptsTokenIds,
    List<String> apis)
    implements CborWire {

  /** Anthropic Messages API ({@code POST /v1/messages}), as vLLM serves it. */
  public static final String MESSAGES_API = "/v1/messages";

  /** Anthropic token counting ({@code POST /v1/messages/count_tokens}), as vLLM serves it. */
  public static final String COUNT_TOKENS_API = "/v1/messages/count_tokens";

  /** OpenAI Responses API ({@code POST /v1/responses}), as vLLM serves it. */
  public static final String RESPONSES_API = "/v1/responses";

  /** An engine whose extra APIs are unknown (it is spoken to in OpenAI chat and completions). */
  public ReplicaInfo(
      String replicaId,
      int dpRank,
      String model,
      String baseUrl,
      int blockSize,
      List<Tier> tiers,
      String role,
      boolean kvEvents,
      boolean acceptsTokenIds) {
    this(
        replicaId, dpRank, model, baseUrl, blockSize, tiers, role, kvEvents, acceptsTokenIds, null);
  }

  public ReplicaInfo {
    Objects.requireNonNull(replicaId, "replicaId");
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(baseUrl, "baseUrl");
    if (blockSize <= 0) {
      throw new IllegalArgumentException("blockSize must be positive, was " + blockSize);
    }
    tiers = List.copyOf(tiers);
    role = role == null ? "both" : role;
    apis = apis == null ? List.of() : List.copyOf(apis);
  }

  /** True when the engine serves {@code path} itself (one of the {@code *_API} constants). */
  public boolean serves(String path) {
    return apis.contains(path);
  }

  /** The routable target: {@code replicaId} for rank 0, {@code replicaId#rank} otherwise. */
  public String targetId() {
    return dpRank == 0 ? replicaId : replicaId + "#" + dpRank;
  }
}

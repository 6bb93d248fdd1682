package io.kvrouter.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
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
 * @param role {@link #BOTH}, {@link #PREFILL} or {@link #DECODE}: the pools of prefill/decode
 *     disaggregation this replica serves in (vLLM's {@code kv_role} of its KV connector: a {@code
 *     kv_both} engine can play either part; the role says which part the operator gives it)
 * @param kvEvents false in approximate mode (engine publishes no KV events)
 * @param acceptsTokenIds true when the engine takes a token-id prompt on /v1/completions
 * @param apis the API paths the engine serves besides the OpenAI chat and completions ones, as its
 *     agent learned them from the engine (e.g. {@code /v1/messages}, {@code /v1/responses}); empty
 *     when unknown, and then the ingress speaks chat to it
 * @param dpSize data-parallel ranks of the engine this replica is one rank of (1 without data
 *     parallelism); with more than one, every rank is its own routable target ({@link #targetId()})
 *     behind the same {@code baseUrl}, chosen per request by the {@link #DP_RANK_HEADER} header
 * @param adapters the LoRA adapters the engine has loaded (vLLM lists them in {@code /v1/models}
 *     with {@code parent} set to the base model), for adapter-aware placement: an ingress serves a
 *     request whose {@code model} names one by replicas of {@code model}, keyed with the adapter,
 *     preferring the replicas that list it. Adapters are loaded and unloaded at run time, so the
 *     agent announces its info again on {@link Topics#REPLICA_INFO}. Empty when none, and then not
 *     written at all (so an engine without adapters is announced in the bytes 0.2.0 pinned; readers
 *     that predate the field ignore it, and messages without it read as empty)
 * @param engine which engine serves the replica (kind, version, hash settings), as its agent knows
 *     it; {@link EngineIdentity#NOTHING_KNOWN} is not written, and messages without it read as that
 * @param alignment the agent's alignment self-test verdict; trackers route to an {@link
 *     AlignmentStatus#untrusted() unaligned} replica by load alone. {@link
 *     AlignmentStatus#UNCHECKED} without a reason is not written, and messages without it (older
 *     agents) read as that
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
    List<String> apis,
    @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = ReplicaInfo.OneRank.class)
        int dpSize,
    @JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> adapters,
    @JsonInclude(
            value = JsonInclude.Include.CUSTOM,
            valueFilter = EngineIdentity.NothingKnown.class)
        EngineIdentity engine,
    @JsonInclude(
            value = JsonInclude.Include.CUSTOM,
            valueFilter = AlignmentStatus.NothingChecked.class)
        AlignmentStatus alignment)
    implements CborWire {

  /** Role of a replica that prefills and decodes (no disaggregation). */
  public static final String BOTH = "both";

  /** Role of a replica that only prefills, for decode replicas to pull the KV from. */
  public static final String PREFILL = "prefill";

  /** Role of a replica that decodes, prefilling locally only the prompts short enough. */
  public static final String DECODE = "decode";

  /**
   * The request header that makes a data-parallel vLLM engine serve a request on one rank:
   * vllm-project/vllm {@code vllm/entrypoints/openai/engine/serving.py} {@code
   * _get_data_parallel_rank} reads {@code X-data-parallel-rank} (HTTP headers are case-insensitive)
   * and passes it to the engine as {@code data_parallel_rank}.
   */
  public static final String DP_RANK_HEADER = "X-data-parallel-rank";

  /** Anthropic Messages API ({@code POST /v1/messages}), as vLLM serves it. */
  public static final String MESSAGES_API = "/v1/messages";

  /** Anthropic token counting ({@code POST /v1/messages/count_tokens}), as vLLM serves it. */
  public static final String COUNT_TOKENS_API = "/v1/messages/count_tokens";

  /** OpenAI Responses API ({@code POST /v1/responses}), as vLLM serves it. */
  public static final String RESPONSES_API = "/v1/responses";

  /**
   * An engine whose extra APIs are unknown (it is spoken to in OpenAI chat and completions), with
   * one data-parallel rank and no LoRA adapter; the canonical constructor sets the rest.
   */
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
        replicaId,
        dpRank,
        model,
        baseUrl,
        blockSize,
        tiers,
        role,
        kvEvents,
        acceptsTokenIds,
        null,
        1,
        null,
        null,
        null);
  }

  /** A replica whose engine and alignment its agent does not say (their defaults). */
  public ReplicaInfo(
      String replicaId,
      int dpRank,
      String model,
      String baseUrl,
      int blockSize,
      List<Tier> tiers,
      String role,
      boolean kvEvents,
      boolean acceptsTokenIds,
      List<String> apis,
      int dpSize,
      List<String> adapters) {
    this(
        replicaId,
        dpRank,
        model,
        baseUrl,
        blockSize,
        tiers,
        role,
        kvEvents,
        acceptsTokenIds,
        apis,
        dpSize,
        adapters,
        null,
        null);
  }

  public ReplicaInfo {
    Objects.requireNonNull(replicaId, "replicaId");
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(baseUrl, "baseUrl");
    if (blockSize <= 0) {
      throw new IllegalArgumentException("blockSize must be positive, was " + blockSize);
    }
    tiers = List.copyOf(tiers);
    role = role == null ? BOTH : role;
    if (!role.equals(BOTH) && !role.equals(PREFILL) && !role.equals(DECODE)) {
      throw new IllegalArgumentException(
          "role must be both, prefill or decode, was '" + role + "'");
    }
    apis = apis == null ? List.of() : List.copyOf(apis);
    adapters = adapters == null ? List.of() : List.copyOf(adapters);
    engine = engine == null ? EngineIdentity.NOTHING_KNOWN : engine;
    alignment = alignment == null ? AlignmentStatus.UNCHECKED : alignment;
    dpSize = Math.max(1, dpSize); // 0 when an older node's announcement lacks the field
    if (dpRank < 0) {
      throw new IllegalArgumentException("dpRank must be >= 0, was " + dpRank);
    }
  }

  /** True when this replica takes the prefill hop of disaggregated requests. */
  public boolean prefills() {
    return !role.equals(DECODE);
  }

  /** True when this replica decodes (and serves requests that are not disaggregated). */
  public boolean decodes() {
    return !role.equals(PREFILL);
  }

  /** True when this replica is one rank of an engine with several data-parallel ranks. */
  public boolean dataParallel() {
    return dpSize > 1;
  }

  /**
   * Jackson's filter for {@code dpSize}: 1 (no data parallelism) is not written, so a replica of an
   * engine without ranks is announced in the bytes 0.2.0 pinned (a missing field reads as 0, taken
   * as 1).
   */
  static final class OneRank {
    @Override
    public boolean equals(Object value) {
      return value instanceof Integer i && i == 1;
    }

    @Override
    public int hashCode() {
      return 1;
    }
  }

  /** The same replica with {@code newEngine} and {@code newAlignment}. */
  public ReplicaInfo with(EngineIdentity newEngine, AlignmentStatus newAlignment) {
    return new ReplicaInfo(
        replicaId,
        dpRank,
        model,
        baseUrl,
        blockSize,
        tiers,
        role,
        kvEvents,
        acceptsTokenIds,
        apis,
        dpSize,
        adapters,
        newEngine,
        newAlignment);
  }

  /** True when the engine serves the LoRA adapter {@code name}. */
  public boolean servesAdapter(String name) {
    return adapters.contains(name);
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

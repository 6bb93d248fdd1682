package io.kvrouter.ingress.routing;

import java.util.List;

/**
 * A replica a request can be forwarded to.
 *
 * @param replicaId routable target id
 * @param baseUrl the engine's OpenAI-compatible base URL, without a trailing slash
 * @param acceptsTokenIds whether {@code /v1/completions} takes a token-id prompt there
 * @param apis API paths the engine serves besides OpenAI chat and completions ({@code
 *     ReplicaInfo.apis})
 * @param dpRank the engine's data-parallel rank that serves the target, sent in {@code
 *     ReplicaInfo.DP_RANK_HEADER}; {@link #NO_RANK} for an engine without data parallelism
 */
public record Target(
    String replicaId, String baseUrl, boolean acceptsTokenIds, List<String> apis, int dpRank) {

  /** The rank of a target whose engine has no data-parallel ranks: no header is sent. */
  public static final int NO_RANK = -1;

  public Target {
    apis = apis == null ? List.of() : List.copyOf(apis);
  }

  /** A replica of an engine without data parallelism. */
  public Target(String replicaId, String baseUrl, boolean acceptsTokenIds, List<String> apis) {
    this(replicaId, baseUrl, acceptsTokenIds, apis, NO_RANK);
  }

  /** A replica spoken to in OpenAI chat and completions only. */
  public Target(String replicaId, String baseUrl, boolean acceptsTokenIds) {
    this(replicaId, baseUrl, acceptsTokenIds, List.of());
  }

  /**
   * {@code request} addressed to this target's rank: with vLLM's {@code X-data-parallel-rank}
   * header when the engine has data-parallel ranks, unchanged otherwise.
   */
  public org.apache.pekko.http.javadsl.model.HttpRequest addressed(
      org.apache.pekko.http.javadsl.model.HttpRequest request) {
    return dpRank == NO_RANK
        ? request
        : request.addHeader(
            org.apache.pekko.http.javadsl.model.headers.RawHeader.create(
                io.kvrouter.protocol.ReplicaInfo.DP_RANK_HEADER, Integer.toString(dpRank)));
  }

  /** True when the engine serves {@code path} itself. */
  public boolean serves(String path) {
    return apis.contains(path);
  }
}

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
 */
public record Target(String replicaId, String baseUrl, boolean acceptsTokenIds, List<String> apis) {

  public Target {
    apis = apis == null ? List.of() : List.copyOf(apis);
  }

  /** A replica spoken to in OpenAI chat and completions only. */
  public Target(String replicaId, String baseUrl, boolean acceptsTokenIds) {
    this(replicaId, baseUrl, acceptsTokenIds, List.of());
  }

  /** True when the engine serves {@code path} itself. */
  public boolean serves(String path) {
    return apis.contains(path);
  }
}

package io.kvrouter.ingress.routing;

import java.util.Set;

/**
 * What the router needs to choose a replica: the model, the prompt's token ids and how many tokens
 * the request may generate; replicas already tried are excluded. The token array is not mutated
 * after construction.
 *
 * @param sessionKey the client's conversation or user key (for affinity), or null
 * @param pinnedReplica the replica holding the request's state (it must serve it while it is
 *     known), or null
 * @param requiredApi an API path the chosen engine must serve itself ({@code
 *     ReplicaInfo.RESPONSES_API}), or null for any
 */
public record RouteQuery(
    String requestId,
    String model,
    int[] tokenIds,
    int maxTokens,
    Set<String> excluded,
    String sessionKey,
    String pinnedReplica,
    String requiredApi) {

  public RouteQuery {
    excluded = Set.copyOf(excluded);
  }

  /** A query with no session key, pin or required API. */
  public RouteQuery(
      String requestId, String model, int[] tokenIds, int maxTokens, Set<String> excluded) {
    this(requestId, model, tokenIds, maxTokens, excluded, null, null, null);
  }

  /** The same query with other replicas excluded. */
  public RouteQuery withExcluded(Set<String> others) {
    return new RouteQuery(
        requestId, model, tokenIds, maxTokens, others, sessionKey, pinnedReplica, requiredApi);
  }
}

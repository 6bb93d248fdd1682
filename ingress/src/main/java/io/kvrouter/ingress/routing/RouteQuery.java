package io.kvrouter.ingress.routing;

import java.util.Set;

/**
 * What the router needs to choose a replica: the model, the prompt's token ids and how many tokens
 * the request may generate; replicas already tried are excluded. The token array is not mutated
 * after construction.
 */
public record RouteQuery(
    String requestId, String model, int[] tokenIds, int maxTokens, Set<String> excluded) {

  public RouteQuery {
    excluded = Set.copyOf(excluded);
  }
}

package io.kvrouter.ingress.routing;

/** The router's answer to a {@link RouteQuery}. */
public sealed interface RouteOutcome {

  /**
   * A replica is reserved for the request.
   *
   * @param reservationId the id the lifecycle calls must use
   * @param predictedCachedTokens prompt tokens the tracker expects the replica to have cached
   */
  record Routed(String reservationId, Target target, int predictedCachedTokens)
      implements RouteOutcome {}

  /** No replica serves the model (or every one was excluded): 503 or 404. */
  record NoReplica(String reason) implements RouteOutcome {}

  /** Every replica is over its busy threshold: queue, then 429. */
  record Busy(String reason) implements RouteOutcome {}
}

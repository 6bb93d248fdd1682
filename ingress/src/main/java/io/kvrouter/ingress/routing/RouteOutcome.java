package io.kvrouter.ingress.routing;

/** The router's answer to a {@link ReplicaQuery}. */
public sealed interface RouteOutcome {

  /**
   * A replica is reserved for the request.
   *
   * @param reservationId the id the lifecycle calls must use
   * @param predictedCachedTokens prompt tokens the tracker expects the replica to have cached
   * @param predictedTtftMillis the tracker's predicted time to first token there (NaN when it made
   *     no prediction)
   * @param othersInFlight the requests the tracker counted reserved on that replica at decision
   *     time besides this one, or {@link #UNKNOWN} when the router does not say
   */
  record Routed(
      String reservationId,
      Target target,
      int predictedCachedTokens,
      double predictedTtftMillis,
      int othersInFlight)
      implements RouteOutcome {

    /** {@link #othersInFlight} of a router that does not count them. */
    public static final int UNKNOWN = -1;

    /** Routed without the replica's other requests counted. */
    public Routed(
        String reservationId,
        Target target,
        int predictedCachedTokens,
        double predictedTtftMillis) {
      this(reservationId, target, predictedCachedTokens, predictedTtftMillis, UNKNOWN);
    }

    /** Routed without a TTFT prediction. */
    public Routed(String reservationId, Target target, int predictedCachedTokens) {
      this(reservationId, target, predictedCachedTokens, Double.NaN);
    }
  }

  /** No replica serves the model (or every one was excluded): 503 or 404. */
  record NoReplica(String reason) implements RouteOutcome {}

  /** Every replica is over its busy threshold: queue, then 429. */
  record Busy(String reason) implements RouteOutcome {}

  /**
   * No replica is predicted to meet the request's TTFT target; nothing is reserved. Queue while
   * waiting can still meet it, otherwise 429.
   *
   * @param bestPredictedMillis the best prediction among the candidates now
   * @param floorMillis the best prediction were its replica idle: no wait can beat it
   */
  record SloMiss(String reason, double bestPredictedMillis, double floorMillis)
      implements RouteOutcome {}
}

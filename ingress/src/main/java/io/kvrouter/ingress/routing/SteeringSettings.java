package io.kvrouter.ingress.routing;

import io.kvrouter.tracker.steering.Steering;
import io.kvrouter.tracker.steering.TtftPredictor;

/**
 * How this ingress turns a query's session binding and TTFT target into the tracker's {@link
 * Steering}: the affinity bonus it grants a bound replica and the TTFT predictor it decides with.
 *
 * @param affinityBonusTokens see {@link Steering#affinityBonusTokens()}
 * @param predictor see {@link Steering#predictor()}; null for no predictions
 */
public record SteeringSettings(double affinityBonusTokens, TtftPredictor predictor) {

  /** No affinity bonus, no predictions. */
  public static final SteeringSettings NONE = new SteeringSettings(0, null);

  /** The steering of {@code query}. */
  Steering steering(RouteQuery query) {
    if (query.boundReplica() == null && predictor == null) {
      return Steering.NONE;
    }
    return new Steering(
        query.boundReplica(), affinityBonusTokens, query.ttftTargetMillis(), predictor);
  }
}

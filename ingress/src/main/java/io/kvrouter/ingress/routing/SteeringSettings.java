package io.kvrouter.ingress.routing;

import io.kvrouter.tracker.steering.Steering;
import io.kvrouter.tracker.steering.TtftPredictor;
import java.util.Set;

/**
 * How this ingress turns a query's session binding, TTFT target and LoRA adapter into the tracker's
 * {@link Steering}: the affinity bonus it grants a bound replica, the TTFT predictor it decides
 * with and what loading an adapter costs.
 *
 * @param affinityBonusTokens see {@link Steering#affinityBonusTokens()}
 * @param predictor see {@link Steering#predictor()}; null for no predictions
 * @param adapterLoadPenaltyTokens see {@link Steering#adapterLoadPenaltyTokens()}
 */
public record SteeringSettings(
    double affinityBonusTokens, TtftPredictor predictor, double adapterLoadPenaltyTokens) {

  /** No affinity bonus, no predictions, the default adapter load penalty. */
  public static final SteeringSettings NONE = new SteeringSettings(0, null);

  /** With the default adapter load penalty ({@link LoraSettings#DEFAULTS}). */
  public SteeringSettings(double affinityBonusTokens, TtftPredictor predictor) {
    this(affinityBonusTokens, predictor, LoraSettings.DEFAULTS.loadPenaltyTokens());
  }

  /**
   * The steering of {@code query}, whose LoRA adapter is loaded on {@code adapterHolders} (null
   * when it names no adapter).
   */
  Steering steering(ReplicaQuery query, Set<String> adapterHolders) {
    if (query.boundReplica() == null && predictor == null && adapterHolders == null) {
      return query.opensSession() ? Steering.OPENS_SESSION : Steering.NONE;
    }
    return new Steering(
        query.boundReplica(),
        affinityBonusTokens,
        query.ttftTargetMillis(),
        predictor,
        adapterHolders,
        adapterLoadPenaltyTokens,
        query.opensSession());
  }
}

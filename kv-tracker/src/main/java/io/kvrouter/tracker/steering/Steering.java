package io.kvrouter.tracker.steering;

/**
 * What a request itself asks of its decision, on top of whatever policy ranks the replicas: a soft
 * affinity to the replica its session is bound to, and a time-to-first-token target. Applied by
 * {@link SteeringRule} after the policy ranked, so it combines with any policy.
 *
 * @param boundReplica target id of the replica the request's session is bound to, or null
 * @param affinityBonusTokens how much more work, in prompt-token equivalents (queued prefill plus
 *     this request's uncached prefill), the bound replica may have than the policy's first choice
 *     and still be chosen; a busy bound replica is never chosen for affinity
 * @param ttftTargetMillis the request's TTFT target in milliseconds, or 0 for none
 * @param predictor how TTFT is predicted per candidate; null for no predictions (then a target is
 *     ignored)
 */
public record Steering(
    String boundReplica,
    double affinityBonusTokens,
    double ttftTargetMillis,
    TtftPredictor predictor) {

  /** Nothing asked. */
  public static final Steering NONE = new Steering(null, 0, 0, null);

  public Steering {
    if (affinityBonusTokens < 0 || ttftTargetMillis < 0) {
      throw new IllegalArgumentException("affinity bonus and TTFT target must be >= 0");
    }
  }

  /** True when a TTFT target is set and can be predicted against. */
  public boolean hasTarget() {
    return ttftTargetMillis > 0 && predictor != null;
  }
}

package io.kvrouter.tracker.steering;

import java.util.Set;

/**
 * What a request itself asks of its decision, on top of whatever policy ranks the replicas: a soft
 * preference for the replicas that have its LoRA adapter loaded, a soft affinity to the replica its
 * session is bound to, and a time-to-first-token target. Applied by {@link SteeringRule} after the
 * policy ranked, so it combines with any policy.
 *
 * @param boundReplica target id of the replica the request's session is bound to, or null
 * @param affinityBonusTokens how much more work, in prompt-token equivalents (queued prefill plus
 *     this request's uncached prefill), the bound replica may have than the policy's first choice
 *     and still be chosen; a busy bound replica is never chosen for affinity
 * @param ttftTargetMillis the request's TTFT target in milliseconds, or 0 for none
 * @param predictor how TTFT is predicted per candidate; null for no predictions (then a target is
 *     ignored)
 * @param adapterHolders target ids of the replicas that have the request's LoRA adapter loaded, or
 *     null when the request names no adapter
 * @param adapterLoadPenaltyTokens what loading the adapter on a replica that lacks it costs, in
 *     prompt-token equivalents of work (see {@link SteeringRule})
 * @param opensSession whether the request opens a session (a session key no replica is bound to
 *     yet): the policy may weigh the later turns that will follow it ({@code cost.session-share})
 */
public record Steering(
    String boundReplica,
    double affinityBonusTokens,
    double ttftTargetMillis,
    TtftPredictor predictor,
    Set<String> adapterHolders,
    double adapterLoadPenaltyTokens,
    boolean opensSession) {

  /** Nothing asked. */
  public static final Steering NONE = new Steering(null, 0, 0, null);

  /** Nothing asked but that the request opens a session. */
  public static final Steering OPENS_SESSION = new Steering(null, 0, 0, null, null, 0, true);

  public Steering {
    if (affinityBonusTokens < 0 || ttftTargetMillis < 0 || adapterLoadPenaltyTokens < 0) {
      throw new IllegalArgumentException(
          "affinity bonus, TTFT target and adapter load penalty must be >= 0");
    }
    adapterHolders = adapterHolders == null ? null : Set.copyOf(adapterHolders);
  }

  /** A request naming no LoRA adapter and opening no session. */
  public Steering(
      String boundReplica,
      double affinityBonusTokens,
      double ttftTargetMillis,
      TtftPredictor predictor) {
    this(boundReplica, affinityBonusTokens, ttftTargetMillis, predictor, null, 0, false);
  }

  /** True when the request names a LoRA adapter (its holders are known, perhaps none). */
  public boolean hasAdapter() {
    return adapterHolders != null;
  }

  /** True when a TTFT target is set and can be predicted against. */
  public boolean hasTarget() {
    return ttftTargetMillis > 0 && predictor != null;
  }
}

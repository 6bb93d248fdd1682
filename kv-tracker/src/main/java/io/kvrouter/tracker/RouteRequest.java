package io.kvrouter.tracker;

import io.kvrouter.tracker.steering.Steering;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A request to place: its id (unique per ingress), the model it asks for, and its prompt's router
 * block keys computed with {@code BlockKeys.of(model, blockSize)}, the block size of the model's
 * replicas. The array is never mutated after the record is built.
 *
 * @param excluded replicas not to choose (already tried by this request and failed)
 * @param admission when true and every remaining replica is over its busy threshold, nothing is
 *     reserved and the decision says {@link Decision#busy()} (the ingress queues the request); when
 *     false the least bad busy replica is chosen (the policy lab's behaviour)
 * @param steering what the request asks on top of the policy (session affinity, a TTFT target),
 *     applied by {@link io.kvrouter.tracker.steering.SteeringRule}; {@link Steering#NONE} for
 *     nothing
 * @param gateCounts strict mode: requests the admission gates of some replicas (by target id)
 *     reported holding when they turned this request away; the decision counts at least that many
 *     there ({@link io.kvrouter.tracker.ledger.GateFloors}). Empty otherwise.
 * @param busyHeadroom with {@code admission}: reservations a replica may hold beyond its busy
 *     threshold for this request ({@link io.kvrouter.tracker.ledger.BusyHeadroom}; the ingress
 *     grants it to a tenant below its fair share); 0 for none
 */
public record RouteRequest(
    String requestId,
    String model,
    long[] blockKeys,
    int promptTokens,
    Set<String> excluded,
    boolean admission,
    Steering steering,
    Map<String, Integer> gateCounts,
    int busyHeadroom) {

  public RouteRequest {
    Objects.requireNonNull(requestId, "requestId");
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(blockKeys, "blockKeys");
    excluded = Set.copyOf(excluded);
    steering = steering == null ? Steering.NONE : steering;
    gateCounts = gateCounts == null ? Map.of() : Map.copyOf(gateCounts);
    if (promptTokens < 0) {
      throw new IllegalArgumentException("promptTokens must be >= 0");
    }
    if (busyHeadroom < 0) {
      throw new IllegalArgumentException("busyHeadroom must be >= 0");
    }
  }

  /** A request no gate turned away yet. */
  public RouteRequest(
      String requestId,
      String model,
      long[] blockKeys,
      int promptTokens,
      Set<String> excluded,
      boolean admission,
      Steering steering) {
    this(requestId, model, blockKeys, promptTokens, excluded, admission, steering, Map.of(), 0);
  }

  /** A request that asks nothing beyond the policy. */
  public RouteRequest(
      String requestId,
      String model,
      long[] blockKeys,
      int promptTokens,
      Set<String> excluded,
      boolean admission) {
    this(requestId, model, blockKeys, promptTokens, excluded, admission, Steering.NONE);
  }

  /** A request with nothing excluded and no busy admission. */
  public RouteRequest(String requestId, String model, long[] blockKeys, int promptTokens) {
    this(requestId, model, blockKeys, promptTokens, Set.of(), false, Steering.NONE);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RouteRequest r
        && promptTokens == r.promptTokens
        && admission == r.admission
        && busyHeadroom == r.busyHeadroom
        && requestId.equals(r.requestId)
        && model.equals(r.model)
        && excluded.equals(r.excluded)
        && steering.equals(r.steering)
        && gateCounts.equals(r.gateCounts)
        && java.util.Arrays.equals(blockKeys, r.blockKeys);
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        requestId, model, promptTokens, excluded, java.util.Arrays.hashCode(blockKeys));
  }

  @Override
  public String toString() {
    return "RouteRequest["
        + requestId
        + ", "
        + model
        + ", blocks="
        + blockKeys.length
        + ", tokens="
        + promptTokens
        + (excluded.isEmpty() ? "" : ", excluded=" + excluded)
        + (steering == Steering.NONE ? "" : ", " + steering)
        + (gateCounts.isEmpty() ? "" : ", gateCounts=" + gateCounts)
        + (busyHeadroom == 0 ? "" : ", busyHeadroom=" + busyHeadroom)
        + "]";
  }
}

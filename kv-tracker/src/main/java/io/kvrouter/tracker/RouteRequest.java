package io.kvrouter.tracker;

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
 */
public record RouteRequest(
    String requestId,
    String model,
    long[] blockKeys,
    int promptTokens,
    Set<String> excluded,
    boolean admission) {

  public RouteRequest {
    Objects.requireNonNull(requestId, "requestId");
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(blockKeys, "blockKeys");
    excluded = Set.copyOf(excluded);
    if (promptTokens < 0) {
      throw new IllegalArgumentException("promptTokens must be >= 0");
    }
  }

  /** A request with nothing excluded and no busy admission. */
  public RouteRequest(String requestId, String model, long[] blockKeys, int promptTokens) {
    this(requestId, model, blockKeys, promptTokens, Set.of(), false);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RouteRequest r
        && promptTokens == r.promptTokens
        && admission == r.admission
        && requestId.equals(r.requestId)
        && model.equals(r.model)
        && excluded.equals(r.excluded)
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
        + "]";
  }
}

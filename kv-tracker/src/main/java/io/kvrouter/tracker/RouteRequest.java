package io.kvrouter.tracker;

import java.util.Objects;

/**
 * A request to place: its id (unique per ingress), the model it asks for, and its prompt's router
 * block keys computed with {@code BlockKeys.of(model, blockSize)} (see
 * {@link KvTrackerCore#blockKeys(String)}). The array is never mutated after the record is built.
 */
public record RouteRequest(String requestId, String model, long[] blockKeys, int promptTokens) {

  public RouteRequest {
    Objects.requireNonNull(requestId, "requestId");
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(blockKeys, "blockKeys");
    if (promptTokens < 0) {
      throw new IllegalArgumentException("promptTokens must be >= 0");
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RouteRequest r
        && promptTokens == r.promptTokens
        && requestId.equals(r.requestId)
        && model.equals(r.model)
        && java.util.Arrays.equals(blockKeys, r.blockKeys);
  }

  @Override
  public int hashCode() {
    return Objects.hash(requestId, model, promptTokens, java.util.Arrays.hashCode(blockKeys));
  }

  @Override
  public String toString() {
    return "RouteRequest[" + requestId + ", " + model + ", blocks=" + blockKeys.length
        + ", tokens=" + promptTokens + "]";
  }
}

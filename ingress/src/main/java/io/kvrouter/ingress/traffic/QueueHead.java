package io.kvrouter.ingress.traffic;

import io.kvrouter.protocol.CborWire;
import java.util.Map;

/**
 * What one ingress's router queue holds for one model ({@link QueueState}), told to the other
 * ingresses: published when what waits changes at once, when only the running counts change at most
 * every {@code peer-heads-coalesce}, and again periodically (so a lost or stale one expires); low
 * rate, Jackson CBOR. {@code waiting} and {@code running} were added after {@code priority}: from
 * an ingress that does not send them they read as null, and only the priority counts.
 *
 * @param ingress the publishing ingress's id
 * @param model the model its waiters ask for
 * @param priority the most pressing waiting priority, or null for none
 * @param waiting the tenants waiting at {@code priority} with their weights (null: not told)
 * @param running the requests the ingress runs for the model per tenant (null: not told)
 */
public record QueueHead(
    String ingress,
    String model,
    Integer priority,
    Map<String, Double> waiting,
    Map<String, Integer> running)
    implements CborWire {

  /** The head {@code ingress} publishes for {@code state}. */
  public static QueueHead of(String ingress, QueueState state) {
    return new QueueHead(
        ingress, state.model(), state.priority(), state.waiting(), state.running());
  }
}

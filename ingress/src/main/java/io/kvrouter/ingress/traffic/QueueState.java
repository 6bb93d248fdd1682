package io.kvrouter.ingress.traffic;

import java.util.Map;

/**
 * What one ingress's router queue holds for one model, as its {@link QueueHead} tells the others:
 * the most pressing priority waiting and which tenants wait at it (so a peer can tell whether one
 * of them is further behind than its own head), and how many requests each tenant runs through this
 * ingress (so every ingress counts a tenant's slots cluster-wide).
 *
 * @param model the model
 * @param priority the most pressing priority waiting, or null when nothing waits
 * @param waiting the tenants waiting at {@code priority}, each with its weight (empty when none)
 * @param running the requests this ingress runs for the model per tenant (tenants with at least
 *     one)
 */
public record QueueState(
    String model, Integer priority, Map<String, Double> waiting, Map<String, Integer> running) {

  /** Nothing waits and nothing runs. */
  public static QueueState idle(String model) {
    return new QueueState(model, null, Map.of(), Map.of());
  }

  /** True when nothing waits and nothing runs. */
  public boolean isIdle() {
    return priority == null && running.isEmpty();
  }
}

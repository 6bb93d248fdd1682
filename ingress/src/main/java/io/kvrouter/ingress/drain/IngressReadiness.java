package io.kvrouter.ingress.drain;

import io.kvrouter.config.management.NodeReadiness;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import org.apache.pekko.actor.typed.ActorSystem;

/**
 * Wires an ingress's readiness into the node's: the guardian hands over its "may I route?" query
 * (HTTP bound, tracker caught up with replicas and peers, some replica serving), and this registers
 * it with {@link NodeReadiness}, which Pekko Management's {@code /ready} asks. It returns the query
 * the ingress's own {@code GET /ready} answers, which also turns false once the node drains.
 *
 * <p>A small adapter on purpose: when readiness moves to an owner actor, only the query passed in
 * changes (an ask to that actor instead of a read).
 */
public final class IngressReadiness {

  private IngressReadiness() {}

  /**
   * Registers {@code routable} as the ingress role's readiness; returns it combined with the drain.
   */
  public static BooleanSupplier register(ActorSystem<?> system, BooleanSupplier routable) {
    NodeReadiness node = NodeReadiness.get(system);
    node.register(() -> CompletableFuture.completedFuture(routable.getAsBoolean()));
    return () -> !node.draining() && routable.getAsBoolean();
  }
}

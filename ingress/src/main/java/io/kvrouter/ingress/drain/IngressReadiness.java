package io.kvrouter.ingress.drain;

import io.kvrouter.config.management.NodeReadiness;
import io.kvrouter.ingress.node.Readiness;
import java.time.Duration;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;

/**
 * Wires an ingress's readiness into the node's: the ingress's {@link Readiness} actor (HTTP bound,
 * tracker caught up with replicas and peers, some replica serving) becomes the ingress role's query
 * in {@link NodeReadiness}, which Pekko Management's {@code /ready} asks, and the node's drain (the
 * first coordinated-shutdown step) reaches that actor as {@link Readiness.Drain}, so the ingress's
 * own {@code GET /ready} turns false at the same moment.
 */
public final class IngressReadiness {

  private IngressReadiness() {}

  /** Registers {@code readiness} as the ingress role's readiness and tells it of the drain. */
  public static void register(
      ActorSystem<?> system, ActorRef<Readiness.Command> readiness, Duration askTimeout) {
    NodeReadiness node = NodeReadiness.get(system);
    node.register(
        () ->
            AskPattern.<Readiness.Command, Readiness.Status>ask(
                    readiness, Readiness.Get::new, askTimeout, system.scheduler())
                .thenApply(Readiness.Status::ready));
    node.onDrain(() -> readiness.tell(Readiness.Drain.INSTANCE));
  }
}

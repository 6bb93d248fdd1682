package io.kvrouter.config.management;

import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;

/**
 * Pekko Management readiness check ({@code pekko.management.health-checks.readiness-checks}) that
 * answers the node's own readiness ({@link NodeReadiness}): {@code /ready} on the management port
 * is 200 only when every role is ready (an ingress: caught up, peers reachable) and the node is not
 * draining.
 *
 * <p>Pekko Management instantiates a check reflectively: a {@code
 * Supplier<CompletionStage<Boolean>>} with a constructor taking the classic {@link ActorSystem}
 * (Pekko Management 1.1.1, docs/src/main/paradox/healthchecks.md).
 */
public final class KvrouterReadinessCheck implements Supplier<CompletionStage<Boolean>> {

  private final NodeReadiness readiness;

  public KvrouterReadinessCheck(ActorSystem system) {
    this.readiness = NodeReadiness.get(Adapter.toTyped(system));
  }

  @Override
  public CompletionStage<Boolean> get() {
    return readiness.ready();
  }
}

package io.kvrouter.config.management;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;

/**
 * The node's readiness as load balancers see it: every role registers its {@link Readiness} query
 * at start-up, and the node is ready when all of them say so and it is not draining. Pekko
 * Management's {@code /ready} asks it through {@link KvrouterReadinessCheck}; on SIGTERM the drain
 * (see {@link NodeManagement}) turns it false first of all.
 *
 * <p>Implementation notes: a registry, not state of its own. The queries are registered once per
 * role when its guardian starts; {@code draining} is written once, by the first coordinated
 * shutdown task, and only ever goes from false to true; drain listeners hear of it then.
 */
public final class NodeReadiness implements Extension {

  private final List<Readiness> queries = new CopyOnWriteArrayList<>();
  private final List<Runnable> drainListeners = new CopyOnWriteArrayList<>();
  private volatile boolean draining;

  private NodeReadiness() {}

  /** The node's registry. */
  public static NodeReadiness get(ActorSystem<?> system) {
    return Id.INSTANCE.apply(system);
  }

  /** Adds a role's readiness query; the node is ready only when it answers true. */
  public void register(Readiness readiness) {
    queries.add(readiness);
  }

  /**
   * Tells {@code listener} when the node starts draining (a role's readiness owner turning itself
   * not-ready, say); at once if it already is.
   */
  public void onDrain(Runnable listener) {
    drainListeners.add(listener);
    if (draining) {
      listener.run();
    }
  }

  /** From now on the node reports not-ready: it is going away. */
  public void startDraining() {
    draining = true;
    drainListeners.forEach(Runnable::run);
  }

  /** Whether the node is draining (SIGTERM received). */
  public boolean draining() {
    return draining;
  }

  /**
   * True when the node is not draining and every registered query answers true; a query that fails
   * counts as not ready. With no query registered (a role without readiness of its own), only
   * draining counts.
   */
  public CompletionStage<Boolean> ready() {
    if (draining) {
      return CompletableFuture.completedFuture(false);
    }
    CompletableFuture<Boolean> all = CompletableFuture.completedFuture(true);
    for (Readiness q : queries) {
      CompletableFuture<Boolean> one = q.query().toCompletableFuture().exceptionally(e -> false);
      all = all.thenCombine(one, (a, b) -> a && b);
    }
    return all.thenApply(ok -> ok && !draining);
  }

  /** The extension id. */
  public static final class Id extends ExtensionId<NodeReadiness> {
    static final Id INSTANCE = new Id();

    private Id() {}

    @Override
    public NodeReadiness createExtension(ActorSystem<?> system) {
      return new NodeReadiness();
    }
  }
}

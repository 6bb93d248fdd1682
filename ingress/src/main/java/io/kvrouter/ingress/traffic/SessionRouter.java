package io.kvrouter.ingress.traffic;

import io.kvrouter.ingress.routing.ReplicaQuery;
import io.kvrouter.ingress.routing.RouteOutcome;
import io.kvrouter.ingress.routing.Router;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;

/**
 * A router that keeps sessions on their replica: it looks up the binding of a query's session
 * ({@link ReplicaQuery#sessionKey()}, per model), asks the wrapped router with it as the bound
 * replica (the tracker gives it an affinity bonus unless it is busy, gone, or beaten by more than
 * the bonus), and records where the request went: a new session is bound, a session that moved is
 * rebound, and a binding in use is refreshed once older than {@code refreshAfterMillis}. A query
 * whose session has no binding yet is marked as opening it ({@link ReplicaQuery#opensSession()}):
 * its later turns follow it, which the policy may weigh. With a {@link ProgramHold}, a bound
 * session whose history (the query's tokens) fits beside the others held on its replica is held
 * there: the query is pinned to it ({@link ReplicaQuery#pinnedReplica()}) unless it already has a
 * pin or that replica was tried, or (the hold's queue test, {@link ProgramHold#queueAllows}) the
 * replica owes more uncached prefill than the least-owed one by more than moving the history costs;
 * what each replica owes is counted from the requests routed here ({@link PrefillQueue}: the tokens
 * the router predicted uncached, until the prefill completes or the request is released). Queries
 * without a session key pass straight through.
 */
public final class SessionRouter implements Router {

  private final Router delegate;
  private final SessionStore store;
  private final long refreshAfterMillis;
  private final LongSupplier clock;
  private final TrafficMetrics metrics;
  private final ProgramHold hold;
  private final PrefillQueue owed = new PrefillQueue();

  public SessionRouter(
      Router delegate,
      SessionStore store,
      long refreshAfterMillis,
      LongSupplier clock,
      TrafficMetrics metrics) {
    this(delegate, store, refreshAfterMillis, clock, metrics, null);
  }

  /** As above, holding programs in mid-session on their replica by {@code hold} (null: none). */
  public SessionRouter(
      Router delegate,
      SessionStore store,
      long refreshAfterMillis,
      LongSupplier clock,
      TrafficMetrics metrics,
      ProgramHold hold) {
    this.delegate = delegate;
    this.store = store;
    this.refreshAfterMillis = refreshAfterMillis;
    this.clock = clock;
    this.metrics = metrics;
    this.hold = hold;
  }

  /** The store key of a query's session: its model and its key. */
  public static String sessionOf(String model, String sessionKey) {
    return model + "\n" + sessionKey;
  }

  @Override
  public CompletionStage<RouteOutcome> selectAndReserve(ReplicaQuery query) {
    if (hold == null || !hold.testsQueues()) {
      return route(query);
    }
    return route(query)
        .thenApply(
            outcome -> {
              if (outcome instanceof RouteOutcome.Routed r) {
                owed.add(
                    r.reservationId(),
                    r.target().replicaId(),
                    (long) query.tokenIds().length - r.predictedCachedTokens());
              }
              return outcome;
            });
  }

  private CompletionStage<RouteOutcome> route(ReplicaQuery query) {
    if (query.sessionKey() == null) {
      return delegate.selectAndReserve(query);
    }
    String session = sessionOf(query.model(), query.sessionKey());
    return store
        .lookup(session)
        .thenCompose(
            binding ->
                delegate
                    .selectAndReserve(
                        held(
                            session,
                            binding,
                            query
                                .withBoundReplica(binding == null ? null : binding.replica())
                                .withOpensSession(binding == null)))
                    .thenApply(
                        outcome -> {
                          if (outcome instanceof RouteOutcome.Routed routed) {
                            remember(session, binding, routed.target().replicaId());
                          }
                          return outcome;
                        }));
  }

  /** {@code query} pinned to its session's replica when the hold keeps it there. */
  private ReplicaQuery held(String session, SessionBinding binding, ReplicaQuery query) {
    if (hold == null) {
      return query;
    }
    if (binding == null
        || query.pinnedReplica() != null
        || query.excluded().contains(binding.replica())) {
      hold.release(session);
      return query;
    }
    long history = query.tokenIds().length;
    boolean keep =
        hold.admit(session, binding.replica(), history, clock.getAsLong())
            && hold.queueAllows(owed.excess(binding.replica()), history);
    return keep ? query.withPinnedReplica(binding.replica()) : query;
  }

  private void remember(String session, SessionBinding binding, String replica) {
    if (binding == null) {
      metrics.session("new");
      store.bind(session, replica);
    } else if (!binding.replica().equals(replica)) {
      metrics.session("moved");
      store.bind(session, replica);
    } else {
      metrics.session("kept");
      if (clock.getAsLong() - binding.touchedMillis() > refreshAfterMillis) {
        store.bind(session, replica);
      }
    }
  }

  @Override
  public void prefillCompleted(String reservationId) {
    owed.done(reservationId);
    delegate.prefillCompleted(reservationId);
  }

  @Override
  public void released(String reservationId) {
    owed.done(reservationId);
    delegate.released(reservationId);
  }

  @Override
  public Set<String> servedModels() {
    return delegate.servedModels();
  }

  @Override
  public String baseModel(String model) {
    return delegate.baseModel(model);
  }

  @Override
  public boolean disaggregated(String model) {
    return delegate.disaggregated(model);
  }
}

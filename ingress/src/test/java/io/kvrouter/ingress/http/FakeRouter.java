package io.kvrouter.ingress.http;

import io.kvrouter.ingress.routing.ReplicaQuery;
import io.kvrouter.ingress.routing.RouteOutcome;
import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.routing.Target;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * Routes to targets in order, skipping excluded ones, and records every lifecycle call. A prefill
 * hop's query is routed among the prefill targets, when the model is disaggregated.
 */
final class FakeRouter implements Router {

  final List<Target> targets = new CopyOnWriteArrayList<>();
  final List<Target> prefillTargets = new CopyOnWriteArrayList<>();
  final Set<String> open = ConcurrentHashMap.newKeySet();
  final List<String> queries = new CopyOnWriteArrayList<>();
  final List<String> prefills = new CopyOnWriteArrayList<>();
  final List<String> releases = new CopyOnWriteArrayList<>();
  final List<Double> ttftTargets = new CopyOnWriteArrayList<>();
  volatile boolean busy;
  volatile boolean disaggregated;

  /** The prompt tokens every routed outcome predicts cached. */
  volatile int predictedCached;

  volatile RuntimeException failure;

  /** When set, answers in place of the targets (given the first target, or null). */
  volatile Function<Target, RouteOutcome> script;

  @Override
  public CompletionStage<RouteOutcome> selectAndReserve(ReplicaQuery query) {
    queries.add(query.requestId());
    ttftTargets.add(query.ttftTargetMillis());
    if (failure != null) {
      return CompletableFuture.failedFuture(failure);
    }
    Function<Target, RouteOutcome> scripted = script;
    if (scripted != null) {
      RouteOutcome outcome = scripted.apply(targets.isEmpty() ? null : targets.get(0));
      if (outcome instanceof RouteOutcome.Routed routed) {
        open.add(routed.reservationId());
      }
      return CompletableFuture.completedFuture(outcome);
    }
    if (busy) {
      return CompletableFuture.completedFuture(new RouteOutcome.Busy("all replicas busy"));
    }
    List<Target> pool = query.pool() == ReplicaQuery.Pool.PREFILL ? prefillTargets : targets;
    for (Target t : pool) {
      if (!query.excluded().contains(t.replicaId())) {
        open.add(query.requestId());
        return CompletableFuture.completedFuture(
            new RouteOutcome.Routed(query.requestId(), t, predictedCached));
      }
    }
    return CompletableFuture.completedFuture(
        new RouteOutcome.NoReplica("no replica serves " + query.model()));
  }

  @Override
  public void prefillCompleted(String reservationId) {
    prefills.add(reservationId);
  }

  @Override
  public void released(String reservationId) {
    releases.add(reservationId);
    open.remove(reservationId);
  }

  @Override
  public Set<String> servedModels() {
    return targets.isEmpty() ? Set.of() : Set.of("kvrouter-demo");
  }

  @Override
  public boolean disaggregated(String model) {
    return disaggregated;
  }

  @Override
  public String baseModel(String model) {
    return model;
  }
}

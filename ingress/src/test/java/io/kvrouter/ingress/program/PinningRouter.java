package io.kvrouter.ingress.program;

import io.kvrouter.ingress.routing.ReplicaQuery;
import io.kvrouter.ingress.routing.RouteOutcome;
import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.routing.Target;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Routes a pinned query to its pinned target, an unpinned warming query to a target other than
 * {@link #turns} (so a warm that forgot its pin lands elsewhere) and any other query to {@link
 * #turns}; answers busy to warming queries while {@link #warmBusy}, and counts {@link
 * #othersInFlight} requests on the replica a query is routed to, with all of its prompt but {@link
 * #uncached} tokens predicted cached there. Records every query and release.
 */
final class PinningRouter implements Router {

  final List<Target> targets = new CopyOnWriteArrayList<>();
  final List<ReplicaQuery> queries = new CopyOnWriteArrayList<>();
  final List<String> releases = new CopyOnWriteArrayList<>();
  volatile String turns;
  volatile boolean warmBusy;
  volatile int othersInFlight;
  volatile int uncached;

  @Override
  public CompletionStage<RouteOutcome> selectAndReserve(ReplicaQuery query) {
    queries.add(query);
    if (warmBusy && query.requestId().startsWith("warm-")) {
      return CompletableFuture.completedFuture(new RouteOutcome.Busy("replica busy"));
    }
    String want = query.pinnedReplica() != null ? query.pinnedReplica() : turns;
    boolean elsewhere = query.pinnedReplica() == null && query.requestId().startsWith("warm-");
    for (Target t : targets) {
      if (t.replicaId().equals(want) != elsewhere) {
        return CompletableFuture.completedFuture(
            new RouteOutcome.Routed(
                query.requestId(),
                t,
                Math.max(0, query.tokenIds().length - uncached),
                Double.NaN,
                othersInFlight));
      }
    }
    return CompletableFuture.completedFuture(new RouteOutcome.NoReplica("no " + want));
  }

  List<ReplicaQuery> warms() {
    return queries.stream().filter(q -> q.requestId().startsWith("warm-")).toList();
  }

  List<ReplicaQuery> turnQueries() {
    return queries.stream().filter(q -> !q.requestId().startsWith("warm-")).toList();
  }

  @Override
  public void prefillCompleted(String reservationId) {}

  @Override
  public void released(String reservationId) {
    releases.add(reservationId);
  }

  @Override
  public Set<String> servedModels() {
    return Set.of("kvrouter-demo");
  }

  @Override
  public boolean disaggregated(String model) {
    return false;
  }

  @Override
  public String baseModel(String model) {
    return model;
  }
}

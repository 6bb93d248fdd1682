package io.kvrouter.ingress.traffic;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.ingress.routing.ReplicaQuery;
import io.kvrouter.ingress.routing.RouteOutcome;
import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.routing.Target;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * A session's first request is marked as opening it (no replica bound yet); its later requests go
 * with their binding and open nothing; requests without a session key are left alone.
 */
class SessionRouterTest {

  @Test
  void firstRequestOfASession_opensIt_laterOnesGoWithTheirBinding() {
    Recording inner = new Recording();
    SessionRouter router =
        new SessionRouter(
            inner, new MapStore(), 60_000, () -> 0L, new TrafficMetrics(new SimpleMeterRegistry()));

    router.selectAndReserve(query("q1", "chat-1")).toCompletableFuture().join();
    router.selectAndReserve(query("q2", "chat-1")).toCompletableFuture().join();
    router.selectAndReserve(query("q3", null)).toCompletableFuture().join();

    assertThat(inner.seen)
        .extracting(ReplicaQuery::opensSession)
        .containsExactly(true, false, false);
    assertThat(inner.seen).extracting(ReplicaQuery::boundReplica).containsExactly(null, "r0", null);
  }

  @Test
  void withAHold_aBoundSessionIsPinnedToItsReplica_unlessItNoLongerFitsWhereAnotherHasRoom() {
    Recording inner = new Recording();
    SessionRouter router =
        holding(inner, new ProgramHold.Settings(10, 1.0, java.time.Duration.ofMinutes(1), true));

    router.selectAndReserve(query("a1", "a", 3)).toCompletableFuture().join(); // opens: placed
    router.selectAndReserve(query("a2", "a", 4)).toCompletableFuture().join(); // held: 4 of 10
    inner.replica = "r1";
    router.selectAndReserve(query("x1", "x", 1)).toCompletableFuture().join(); // opens on r1
    router.selectAndReserve(query("x2", "x", 1)).toCompletableFuture().join(); // held: 1 of 10
    inner.replica = "r0";
    router.selectAndReserve(query("b1", "b", 5)).toCompletableFuture().join(); // opens on r0
    router.selectAndReserve(query("b2", "b", 7)).toCompletableFuture().join(); // 4 + 7 > 10; r1
    router.selectAndReserve(query("a3", "a", 3)).toCompletableFuture().join(); // 3 + 7 fits r0
    router.selectAndReserve(query("c1", null, 9)).toCompletableFuture().join(); // no session

    assertThat(inner.seen)
        .extracting(ReplicaQuery::pinnedReplica)
        .containsExactly(null, "r0", null, "r1", null, null, "r0", null);
  }

  @Test
  void withTheQueueTest_aHeldSessionLeavesAReplicaOwingMorePrefillThanMovingCosts() {
    Recording inner = new Recording();
    SessionRouter router =
        holding(
            inner,
            new ProgramHold.Settings(1_000, 1.0, java.time.Duration.ofMinutes(1), true, 1.0));

    router.selectAndReserve(query("a1", "a", 100)).toCompletableFuture().join(); // opens on r0
    router.prefillCompleted("a1");
    inner.replica = "r1";
    router.selectAndReserve(query("x1", "x", 10)).toCompletableFuture().join(); // opens on r1
    router.prefillCompleted("x1");
    inner.replica = "r0";
    // r0 now owes 300 uncached tokens (nothing predicted cached), r1 nothing.
    router.selectAndReserve(query("q1", null, 300)).toCompletableFuture().join();
    router.selectAndReserve(query("a2", "a", 200)).toCompletableFuture().join(); // 300 > 200: go
    router.released("a2");
    router.selectAndReserve(query("a3", "a", 300)).toCompletableFuture().join(); // 300 <= 300
    router.released("a3");
    router.released("q1");
    router.selectAndReserve(query("a4", "a", 100)).toCompletableFuture().join(); // owes 0: held
    inner.cached = 250;
    router.selectAndReserve(query("a5", "a", 300)).toCompletableFuture().join(); // 100 <= 300
    // r0 owes a4's 100 and a5's 300 - 250 predicted cached.
    router.selectAndReserve(query("a6", "a", 200)).toCompletableFuture().join(); // 150 <= 200
    router.selectAndReserve(query("a7", "a", 100)).toCompletableFuture().join(); // 150 > 100: go

    assertThat(inner.seen)
        .extracting(ReplicaQuery::pinnedReplica)
        .containsExactly(null, null, null, null, "r0", "r0", "r0", "r0", null);
  }

  private static SessionRouter holding(Router inner, ProgramHold.Settings settings) {
    return new SessionRouter(
        inner,
        new MapStore(),
        60_000,
        () -> 0L,
        new TrafficMetrics(new SimpleMeterRegistry()),
        new ProgramHold(settings));
  }

  private static ReplicaQuery query(String id, String session, int tokens) {
    return new ReplicaQuery(id, "m", new int[tokens], 8, Set.of(), session, null, null);
  }

  private static ReplicaQuery query(String id, String session) {
    return new ReplicaQuery(id, "m", new int[] {1, 2, 3}, 8, Set.of(), session, null, null);
  }

  /** Routes everything to {@code replica} (r0 unless set) and keeps the queries it was asked. */
  private static final class Recording implements Router {
    final List<ReplicaQuery> seen = new ArrayList<>();
    String replica = "r0";
    int cached;

    @Override
    public CompletionStage<RouteOutcome> selectAndReserve(ReplicaQuery query) {
      seen.add(query);
      return CompletableFuture.completedFuture(
          new RouteOutcome.Routed(
              query.requestId(), new Target(replica, "http://127.0.0.1:1", true), cached, 0));
    }

    @Override
    public void prefillCompleted(String reservationId) {}

    @Override
    public void released(String reservationId) {}

    @Override
    public Set<String> servedModels() {
      return Set.of("m");
    }

    @Override
    public String baseModel(String model) {
      return model;
    }

    @Override
    public boolean disaggregated(String model) {
      return false;
    }
  }

  private static final class MapStore implements SessionStore {
    final Map<String, SessionBinding> bindings = new ConcurrentHashMap<>();

    @Override
    public CompletionStage<SessionBinding> lookup(String session) {
      return CompletableFuture.completedFuture(bindings.get(session));
    }

    @Override
    public void bind(String session, String replica) {
      bindings.put(session, new SessionBinding(replica, 0));
    }
  }
}

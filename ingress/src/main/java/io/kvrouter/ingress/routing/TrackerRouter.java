package io.kvrouter.ingress.routing;

import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.strict.StrictGate;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.tracker.Decision;
import io.kvrouter.tracker.RouteRequest;
import io.kvrouter.tracker.actor.KvTracker;
import io.kvrouter.tracker.keys.BlockKeys;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Scheduler;
import org.apache.pekko.actor.typed.javadsl.AskPattern;

/**
 * The ingress's {@link Router} over its node's {@link KvTracker}: hashes the prompt into block keys
 * here, on the request's thread, so the tracker actor only matches, scores and reserves; one ask
 * per attempt (the HTTP edge is where asking belongs), then tells for the lifecycle.
 *
 * <p>In strict mode ({@code gate} not null) each decision is also admitted by the chosen replica's
 * sharded gate, which serialises decisions across every ingress: when another ingress got there
 * first, the reservation is given back and the tracker decides again without that replica; when
 * every candidate turned it away, it starts another round over all of them (by then it has seen
 * more of the other ingresses' reservations), and after three rounds its last candidate admits it
 * regardless.
 */
public final class TrackerRouter implements Router {

  private final ActorRef<KvTracker.Command> tracker;
  private final Scheduler scheduler;
  private final Duration askTimeout;
  private final ReplicaDirectory directory;
  private final TokenizerRegistry tokenizers;
  private final IngressMetrics metrics;
  private final Map<String, BlockKeys> keys = new ConcurrentHashMap<>();
  private final StrictGate gate;
  private final Map<String, String> gated = new ConcurrentHashMap<>();
  private final Map<String, Set<String>> gateRejected = new ConcurrentHashMap<>();
  private final Map<String, Integer> gateRounds = new ConcurrentHashMap<>();

  private final SteeringSettings steering;

  /** Rounds over every candidate a request may be turned away in, before its last is forced. */
  private static final int GATE_ROUNDS = 3;

  public TrackerRouter(
      ActorRef<KvTracker.Command> tracker,
      Scheduler scheduler,
      Duration askTimeout,
      ReplicaDirectory directory,
      TokenizerRegistry tokenizers,
      IngressMetrics metrics,
      StrictGate gate) {
    this(
        tracker,
        scheduler,
        askTimeout,
        directory,
        tokenizers,
        metrics,
        gate,
        SteeringSettings.NONE);
  }

  /**
   * @param steering how a query's session binding and TTFT target reach the tracker
   */
  public TrackerRouter(
      ActorRef<KvTracker.Command> tracker,
      Scheduler scheduler,
      Duration askTimeout,
      ReplicaDirectory directory,
      TokenizerRegistry tokenizers,
      IngressMetrics metrics,
      StrictGate gate,
      SteeringSettings steering) {
    this.steering = steering;
    this.gate = gate;
    this.tracker = tracker;
    this.scheduler = scheduler;
    this.askTimeout = askTimeout;
    this.directory = directory;
    this.tokenizers = tokenizers;
    this.metrics = metrics;
  }

  @Override
  public CompletionStage<RouteOutcome> selectAndReserve(RouteQuery query) {
    long[] blockKeys = keysFor(query.model()).keys(query.tokenIds());
    RouteRequest request =
        new RouteRequest(
            query.requestId(),
            query.model(),
            blockKeys,
            query.tokenIds().length,
            ReplicaConstraints.excluded(query, directory.all()),
            true,
            steering.steering(query));
    long start = System.nanoTime();
    return AskPattern.<KvTracker.Command, Decision>ask(
            tracker,
            replyTo -> new KvTracker.SelectAndReserve(request, replyTo),
            askTimeout,
            scheduler)
        .thenCompose(decision -> outcome(query, decision, start));
  }

  private CompletionStage<RouteOutcome> outcome(RouteQuery query, Decision decision, long start) {
    metrics.decision(System.nanoTime() - start);
    if (decision.sloMiss()) {
      return CompletableFuture.completedFuture(sloMiss(query, decision));
    }
    if (!decision.placed()) {
      return CompletableFuture.completedFuture(
          decision.busy()
              ? new RouteOutcome.Busy(
                  "every replica serving '" + query.model() + "' is over its busy threshold")
              : new RouteOutcome.NoReplica("no replica serves '" + query.model() + "' right now"));
    }
    var target = directory.target(decision.chosen());
    if (target.isEmpty()) {
      // The tracker still lists a replica that has just left: give the reservation back and
      // decide again without it.
      released(query.requestId());
      Set<String> excluded = new HashSet<>(query.excluded());
      excluded.add(decision.chosen());
      return selectAndReserve(query.withExcluded(excluded));
    }
    int predicted = decision.ranked().isEmpty() ? 0 : decision.ranked().get(0).cachedTokens();
    double ttft =
        decision.ranked().isEmpty() ? Double.NaN : decision.ranked().get(0).predictedTtftMillis();
    RouteOutcome.Routed routed =
        new RouteOutcome.Routed(query.requestId(), target.get(), predicted, ttft);
    if (gate == null) {
      return CompletableFuture.completedFuture(routed);
    }
    String id = query.requestId();
    boolean last = decision.ranked().size() <= 1;
    int round = gateRounds.getOrDefault(id, 0);
    boolean force = last && round >= GATE_ROUNDS;
    int expected = force ? Integer.MAX_VALUE : decision.ranked().get(0).inFlight();
    return gate.admit(decision.chosen(), id, expected)
        .thenCompose(
            admission -> {
              if (admission.admitted()) {
                gated.put(id, decision.chosen());
                gateRejected.remove(id);
                gateRounds.remove(id);
                return CompletableFuture.completedFuture(routed);
              }
              released(id);
              Set<String> rejected =
                  gateRejected.computeIfAbsent(id, k -> ConcurrentHashMap.newKeySet());
              Set<String> excluded = new HashSet<>(query.excluded());
              if (last) {
                // Every candidate turned this request away: start another round over all of them,
                // by now with more of the other ingresses' reservations seen.
                excluded.removeAll(rejected);
                rejected.clear();
                gateRounds.merge(id, 1, Integer::sum);
              } else {
                rejected.add(decision.chosen());
                excluded.add(decision.chosen());
              }
              return selectAndReserve(query.withExcluded(excluded));
            });
  }

  private static RouteOutcome sloMiss(RouteQuery query, Decision decision) {
    double best = Double.POSITIVE_INFINITY;
    double floor = Double.POSITIVE_INFINITY;
    for (Decision.Candidate c : decision.ranked()) {
      best = Math.min(best, c.predictedTtftMillis());
      floor = Math.min(floor, c.ttftFloorMillis());
    }
    return new RouteOutcome.SloMiss(
        "no replica serving '"
            + query.model()
            + "' is predicted to meet the TTFT target of "
            + Math.round(query.ttftTargetMillis())
            + " ms (best: "
            + Math.round(best)
            + " ms)",
        best,
        floor);
  }

  /** The block-key function of a model, with the block size its configuration gives. */
  private BlockKeys keysFor(String model) {
    return keys.computeIfAbsent(
        model,
        m -> {
          int blockSize =
              tokenizers
                  .find(m)
                  .map(t -> t.blockSize())
                  .orElseGet(() -> directory.blockSize(m, BlockKeys.DEFAULT_BLOCK_SIZE));
          return BlockKeys.of(m, blockSize);
        });
  }

  @Override
  public void prefillCompleted(String reservationId) {
    tracker.tell(new KvTracker.PrefillDone(reservationId));
  }

  @Override
  public void released(String reservationId) {
    tracker.tell(new KvTracker.Release(reservationId));
    if (gate != null) {
      String replica = gated.remove(reservationId);
      if (replica != null) {
        gate.leave(replica, reservationId);
      }
    }
  }

  @Override
  public Set<String> servedModels() {
    return directory.models();
  }
}

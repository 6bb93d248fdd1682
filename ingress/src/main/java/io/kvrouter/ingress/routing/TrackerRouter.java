package io.kvrouter.ingress.routing;

import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.strict.AdmissionGate;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.tracker.Decision;
import io.kvrouter.tracker.RouteRequest;
import io.kvrouter.tracker.actor.KvTracker;
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
 * gate, which serialises decisions across every ingress: when another ingress got there first, the
 * reservation is given back and the tracker decides again without that replica; when every
 * candidate turned it away, it starts another round over all of them (by then it has seen more of
 * the other ingresses' reservations), and after {@value #GATE_ROUNDS} rounds its last candidate
 * admits it regardless. The rounds' state travels with the call as an {@link Attempt} value, so a
 * call that ends in busy (429), no replica (503) or a failed ask leaves nothing behind; the only
 * state kept between calls is the gate each admitted reservation must leave, dropped when it is
 * released.
 *
 * <p>Every failure gives back what it may hold: a tracker ask that fails releases the reservation
 * the tracker may still have recorded, and a gate ask that fails also leaves that gate, where the
 * admission may have landed after the timeout (the gate's lease ends it if the leave overtakes the
 * admit).
 */
public final class TrackerRouter implements Router {

  private final ActorRef<KvTracker.Command> tracker;
  private final Scheduler scheduler;
  private final Duration askTimeout;
  private final ReplicaDirectory directory;
  private final TokenizerRegistry tokenizers;
  private final IngressMetrics metrics;
  private final Map<String, BlockKeys> keys = new ConcurrentHashMap<>();
  private final AdmissionGate gate;

  /** The replica whose gate admitted each open reservation (strict mode), until its release. */
  private final Map<String, String> gated = new ConcurrentHashMap<>();

  /** Rounds over every candidate a request may be turned away in, before its last is forced. */
  static final int GATE_ROUNDS = 3;

  /**
   * @param gate the replicas' admission gates in strict mode, {@code null} in broadcast mode
   */
  public TrackerRouter(
      ActorRef<KvTracker.Command> tracker,
      Scheduler scheduler,
      Duration askTimeout,
      ReplicaDirectory directory,
      TokenizerRegistry tokenizers,
      IngressMetrics metrics,
      AdmissionGate gate) {
    this.gate = gate;
    this.tracker = tracker;
    this.scheduler = scheduler;
    this.askTimeout = askTimeout;
    this.directory = directory;
    this.tokenizers = tokenizers;
    this.metrics = metrics;
  }

  /**
   * One call's progress: the caller's query, the replicas whose gates turned it away in this round
   * and the rounds already over. Immutable; each retry makes the next one.
   */
  private record Attempt(RouteQuery original, Set<String> rejected, int round) {

    /** The query for the tracker: the caller's exclusions plus this round's rejections. */
    RouteQuery query() {
      if (rejected.isEmpty()) {
        return original;
      }
      Set<String> excluded = new HashSet<>(original.excluded());
      excluded.addAll(rejected);
      return with(excluded);
    }

    /** {@code replica} is gone from the directory: never again for this call. */
    Attempt without(String replica) {
      Set<String> excluded = new HashSet<>(original.excluded());
      excluded.add(replica);
      return new Attempt(with(excluded), rejected, round);
    }

    /**
     * {@code replica}'s gate turned the request away; when it was the {@code last} candidate,
     * another round starts over all of them.
     */
    Attempt turnedAway(String replica, boolean last) {
      if (last) {
        return new Attempt(original, Set.of(), round + 1);
      }
      Set<String> more = new HashSet<>(rejected);
      more.add(replica);
      return new Attempt(original, Set.copyOf(more), round);
    }

    private RouteQuery with(Set<String> excluded) {
      return original.withExcluded(excluded);
    }
  }

  @Override
  public CompletionStage<RouteOutcome> selectAndReserve(RouteQuery query) {
    return attempt(new Attempt(query, Set.of(), 0));
  }

  private CompletionStage<RouteOutcome> attempt(Attempt attempt) {
    RouteQuery query = attempt.query();
    long[] blockKeys = keysFor(query.model()).keys(query.tokenIds());
    RouteRequest request =
        new RouteRequest(
            query.requestId(),
            query.model(),
            blockKeys,
            query.tokenIds().length,
            ReplicaConstraints.excluded(query, directory.all()),
            true);
    long start = System.nanoTime();
    return AskPattern.<KvTracker.Command, Decision>ask(
            tracker,
            replyTo -> new KvTracker.SelectAndReserve(request, replyTo),
            askTimeout,
            scheduler)
        .handle(
            (decision, error) -> {
              if (error != null) {
                // The tracker may have reserved after the ask gave up: the release follows the
                // request into its mailbox.
                tracker.tell(new KvTracker.Release(query.requestId()));
                return CompletableFuture.<RouteOutcome>failedFuture(error);
              }
              return outcome(attempt, decision, start);
            })
        .thenCompose(stage -> stage);
  }

  private CompletionStage<RouteOutcome> outcome(Attempt attempt, Decision decision, long start) {
    metrics.decision(System.nanoTime() - start);
    String id = attempt.original().requestId();
    String model = attempt.original().model();
    if (!decision.placed()) {
      return CompletableFuture.completedFuture(
          decision.busy()
              ? new RouteOutcome.Busy(
                  "every replica serving '" + model + "' is over its busy threshold")
              : new RouteOutcome.NoReplica("no replica serves '" + model + "' right now"));
    }
    String chosen = decision.chosen();
    var target = directory.target(chosen);
    if (target.isEmpty()) {
      // The tracker still lists a replica that has just left: give the reservation back and
      // decide again without it.
      tracker.tell(new KvTracker.Release(id));
      return attempt(attempt.without(chosen));
    }
    int predicted = decision.ranked().isEmpty() ? 0 : decision.ranked().get(0).cachedTokens();
    RouteOutcome.Routed routed = new RouteOutcome.Routed(id, target.get(), predicted);
    if (gate == null) {
      return CompletableFuture.completedFuture(routed);
    }
    boolean last = decision.ranked().size() <= 1;
    boolean force = last && attempt.round() >= GATE_ROUNDS;
    int expected = force ? Integer.MAX_VALUE : decision.ranked().get(0).inFlight();
    return gate.admit(chosen, id, expected)
        .handle(
            (admission, error) -> {
              if (error != null) {
                tracker.tell(new KvTracker.Release(id));
                gate.leave(chosen, id);
                return CompletableFuture.<RouteOutcome>failedFuture(error);
              }
              if (admission.admitted()) {
                gated.put(id, chosen);
                return CompletableFuture.<RouteOutcome>completedFuture(routed);
              }
              // Another ingress got there first: give the reservation back and decide again.
              tracker.tell(new KvTracker.Release(id));
              return attempt(attempt.turnedAway(chosen, last));
            })
        .thenCompose(stage -> stage);
  }

  /** Admitted reservations not yet released (strict mode); for tests and diagnostics. */
  int openAdmissions() {
    return gated.size();
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

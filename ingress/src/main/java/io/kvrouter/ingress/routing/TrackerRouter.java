package io.kvrouter.ingress.routing;

import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.stage.SameThread;
import io.kvrouter.ingress.strict.AdmissionGate;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.protocol.keys.ExtraKeys;
import io.kvrouter.protocol.keys.MediaPrompt;
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
 * (with the request's cache salt, as the engine hashes it) here, on the request's thread, so the
 * tracker actor only matches, scores and reserves; one ask per attempt (the HTTP edge is where
 * asking belongs), then tells for the lifecycle.
 *
 * <p>In strict mode ({@code gate} not null) each decision is also admitted by the chosen replica's
 * gate, which serialises decisions across every ingress: when another ingress got there first, the
 * reservation is given back and the tracker decides again, counting on that replica the requests
 * its gate reported ({@link RouteAttempt}); after {@value #GATE_ROUNDS} turn-aways per candidate
 * the chosen gate admits it regardless. A reservation reaches the peers only once its gate admitted
 * it: one turned away would otherwise show them load that was never placed (they would then shun
 * that replica and crowd another, which its gate, seeing no fewer requests than they expected,
 * would admit). The call's state travels with it as a {@link RouteAttempt} value, so a call that
 * ends in busy (429), no replica (503) or a failed ask leaves nothing behind; the only state kept
 * between calls is the gate each admitted reservation must leave ({@link GatedReservations}),
 * dropped when it is released.
 *
 * <p>A request whose model names a LoRA adapter ({@link ReplicaDirectory#adapter}) is placed among
 * the replicas of the adapter's base model, with block keys that include the adapter (as vLLM keys
 * the blocks of a LoRA request, so only replicas that ran the adapter can match) and with the
 * adapter's holders preferred ({@link io.kvrouter.tracker.steering.SteeringRule}). When the
 * decision spreads it to a replica that lacks it, the {@link AdapterLoader} loads it there before
 * the request goes; a load that fails gives the reservation back and decides again without that
 * replica. With {@link LoraSettings#loadWhereMissing()} off, only holders are candidates.
 *
 * <p>Every failure gives back what it may hold: a tracker ask that fails releases the reservation
 * the tracker may still have recorded, and a gate ask that fails also leaves that gate, where the
 * admission may have landed after the timeout (the gate's lease ends it if the leave overtakes the
 * admit).
 */
public final class TrackerRouter implements Router {

  private static final org.slf4j.Logger log =
      org.slf4j.LoggerFactory.getLogger(TrackerRouter.class);

  private final ActorRef<KvTracker.Command> tracker;
  private final Scheduler scheduler;
  private final Duration askTimeout;
  private final ReplicaDirectory directory;
  private final TokenizerRegistry tokenizers;
  private final RouterBlockSize blockSize;
  private final IngressMetrics metrics;
  private final Map<String, BlockKeys> keys = new ConcurrentHashMap<>();

  /** Strict mode's gates and the gate each admitted reservation must leave; null in broadcast. */
  private final GatedReservations gates;

  private final SteeringSettings steering;

  /** Loads adapters where a decision spreads them; null when adapters go only to holders. */
  private final AdapterLoader loader;

  /** Turn-aways per candidate a request may meet before its gate admission is forced. */
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
    this(
        tracker,
        scheduler,
        askTimeout,
        directory,
        tokenizers,
        metrics,
        gate,
        SteeringSettings.NONE,
        LoraSettings.DEFAULTS);
  }

  /**
   * @param gate the replicas' admission gates in strict mode, {@code null} in broadcast mode
   * @param steering how a query's session binding, TTFT target and adapter reach the tracker
   * @param lora whether and how adapters are loaded where a decision spreads them
   */
  public TrackerRouter(
      ActorRef<KvTracker.Command> tracker,
      Scheduler scheduler,
      Duration askTimeout,
      ReplicaDirectory directory,
      TokenizerRegistry tokenizers,
      IngressMetrics metrics,
      AdmissionGate gate,
      SteeringSettings steering,
      LoraSettings lora) {
    this.steering = steering;
    this.loader =
        lora.loadWhereMissing()
            ? new AdapterLoader(lora.loadTimeout(), lora.rememberLoaded())
            : null;
    this.gates = gate == null ? null : new GatedReservations(gate);
    this.tracker = tracker;
    this.scheduler = scheduler;
    this.askTimeout = askTimeout;
    this.directory = directory;
    this.tokenizers = tokenizers;
    this.blockSize = new RouterBlockSize(tokenizers, directory);
    this.metrics = metrics;
  }

  @Override
  public CompletionStage<RouteOutcome> selectAndReserve(ReplicaQuery query) {
    return attempt(RouteAttempt.first(query)).thenCompose(outcome -> withAdapter(query, outcome));
  }

  /**
   * The outcome once the chosen replica has the query's LoRA adapter: loaded there first when the
   * decision spread the adapter to it; when that fails, the reservation is given back and the query
   * decided again without that replica.
   */
  private CompletionStage<RouteOutcome> withAdapter(ReplicaQuery query, RouteOutcome outcome) {
    var adapter = directory.adapter(query.model());
    if (loader == null
        || adapter.isEmpty()
        || !(outcome instanceof RouteOutcome.Routed routed)
        || holders(query.model(), adapter.get()).contains(routed.target().replicaId())) {
      return CompletableFuture.completedFuture(outcome);
    }
    java.util.List<String> holderUrls =
        adapter.get().holders().stream()
            .map(directory::target)
            .flatMap(java.util.Optional::stream)
            .map(Target::baseUrl)
            .distinct()
            .toList();
    return loader
        .load(routed.target().baseUrl(), query.model(), holderUrls)
        .handle(
            (loaded, error) -> {
              metrics.adapterLoad(error == null);
              if (error == null) {
                return CompletableFuture.completedFuture(outcome);
              }
              log.warn(
                  "LoRA adapter '{}' could not be loaded on {}: {}; deciding again without it",
                  query.model(),
                  routed.target().replicaId(),
                  error.toString());
              released(routed.reservationId());
              Set<String> excluded = new HashSet<>(query.excluded());
              excluded.add(routed.target().replicaId());
              return selectAndReserve(query.withExcluded(excluded));
            })
        .thenCompose(stage -> stage);
  }

  /**
   * The replicas that hold {@code name}: those the directory lists, and those of the same base
   * model whose engine this ingress loaded it on lately ({@link AdapterLoader#loadedOn}).
   */
  private Set<String> holders(String name, ReplicaDirectory.Adapter adapter) {
    Set<String> loadedOn = loader == null ? Set.of() : loader.loadedOn(name);
    if (loadedOn.isEmpty()) {
      return adapter.holders();
    }
    Set<String> out = new HashSet<>(adapter.holders());
    for (var i : directory.all()) {
      if (i.model().equals(adapter.baseModel())
          && directory
              .target(i.targetId())
              .map(t -> loadedOn.contains(t.baseUrl()))
              .orElse(false)) {
        out.add(i.targetId());
      }
    }
    return out;
  }

  private CompletionStage<RouteOutcome> attempt(RouteAttempt attempt) {
    ReplicaQuery query = attempt.query();
    var adapter = directory.adapter(query.model());
    String model = adapter.map(ReplicaDirectory.Adapter::baseModel).orElse(query.model());
    Set<String> holders = adapter.map(a -> holders(query.model(), a)).orElse(null);
    long[] blockKeys =
        keysFor(model)
            .keys(
                query.tokenIds(),
                withImages(
                    ExtraKeys.of(adapter.isPresent() ? query.model() : null, query.cacheSalt()),
                    model,
                    query));
    Set<String> excluded =
        ReplicaConstraints.excluded(query, model, directory.all(), directory.rolesMatter(model));
    if (holders != null && loader == null) {
      excluded = ReplicaConstraints.withoutNonHolders(excluded, model, holders, directory.all());
    }
    RouteRequest request =
        new RouteRequest(
            query.requestId(),
            model,
            blockKeys,
            query.tokenIds().length,
            excluded,
            true,
            steering.steering(query, holders),
            attempt.gateCounts(),
            query.busyHeadroom());
    long start = System.nanoTime();
    // The decision is taken up on the thread the tracker replied from, not the common pool.
    return SameThread.of(
            AskPattern.<KvTracker.Command, Decision>ask(
                tracker,
                replyTo -> new KvTracker.SelectAndReserve(request, replyTo, gates == null),
                askTimeout,
                scheduler))
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

  private CompletionStage<RouteOutcome> outcome(
      RouteAttempt attempt, Decision decision, long start) {
    metrics.decision(System.nanoTime() - start, decision.heldMillis());
    String id = attempt.query().requestId();
    String model = attempt.query().model();
    if (decision.sloMiss()) {
      return CompletableFuture.completedFuture(sloMiss(attempt.query(), decision));
    }
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
    double ttft =
        decision.ranked().isEmpty() ? Double.NaN : decision.ranked().get(0).predictedTtftMillis();
    int others =
        decision.ranked().isEmpty()
            ? RouteOutcome.Routed.UNKNOWN
            : decision.ranked().get(0).inFlight();
    RouteOutcome.Routed routed = new RouteOutcome.Routed(id, target.get(), predicted, ttft, others);
    if (gates == null) {
      return CompletableFuture.completedFuture(routed);
    }
    boolean force = attempt.forced(decision.ranked().size(), GATE_ROUNDS);
    int expected = force ? Integer.MAX_VALUE : decision.ranked().get(0).inFlight();
    return gates
        .admit(chosen, id, expected)
        .handle(
            (admission, error) -> {
              if (error != null) {
                tracker.tell(new KvTracker.Release(id));
                gates.failed(chosen, id);
                return CompletableFuture.<RouteOutcome>failedFuture(error);
              }
              if (admission.admitted()) {
                gates.admitted(id, chosen);
                tracker.tell(new KvTracker.Announce(id));
                return CompletableFuture.<RouteOutcome>completedFuture(routed);
              }
              // Another ingress got there first: give the reservation back (the peers never saw
              // it) and decide again, counting what the gate holds.
              tracker.tell(new KvTracker.Release(id));
              return attempt(attempt.turnedAway(chosen, admission.inFlight()));
            })
        .thenCompose(stage -> stage);
  }

  /** Admitted reservations not yet released (strict mode); for tests and diagnostics. */
  int openAdmissions() {
    return gates == null ? 0 : gates.open();
  }

  private static RouteOutcome sloMiss(ReplicaQuery query, Decision decision) {
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

  /**
   * {@code extras} with the query's images at their placeholder tokens, named as the model's engine
   * names them ({@link MediaPrompt#keyExtras}: the client's uuid, else vLLM's content hash under
   * the model's {@code images.engine-model-id}).
   */
  private ExtraKeys withImages(ExtraKeys extras, String model, ReplicaQuery query) {
    if (query.images().isEmpty()) {
      return extras;
    }
    MediaPrompt.Settings images =
        tokenizers.find(model).map(t -> t.images()).orElse(MediaPrompt.Settings.DEFAULTS);
    return MediaPrompt.keyExtras(
        extras, query.images(), query.tokenIds(), images, images.modelId(model));
  }

  /** The block-key function of a model, with the block size its configuration gives. */
  private BlockKeys keysFor(String model) {
    return keys.computeIfAbsent(model, m -> BlockKeys.of(m, blockSize.applyAsInt(m)));
  }

  @Override
  public void prefillCompleted(String reservationId) {
    tracker.tell(new KvTracker.PrefillDone(reservationId));
  }

  @Override
  public void released(String reservationId) {
    tracker.tell(new KvTracker.Release(reservationId));
    if (gates != null) {
      gates.released(reservationId);
    }
  }

  @Override
  public Set<String> servedModels() {
    return directory.models();
  }

  @Override
  public String baseModel(String model) {
    return directory.baseModel(model);
  }

  @Override
  public boolean disaggregated(String model) {
    return directory.disaggregated(model);
  }
}

package io.kvrouter.loadtest.lab;

import io.kvrouter.loadtest.baselines.PeerGroup;
import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.WorkloadRequest;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.RouteIntent;
import io.kvrouter.tracker.Decision;
import io.kvrouter.tracker.KvTrackerCore;
import io.kvrouter.tracker.RouteRequest;
import io.kvrouter.tracker.policy.Policies;
import io.kvrouter.tracker.policy.Visibility;
import io.kvrouter.tracker.steering.Steering;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * One policy's replay of a workload in virtual time: N {@link LabEngine}s and K routers (each a
 * {@link KvTrackerCore} with its own instance of the policy), driven by one discrete-event loop.
 *
 * <p>Events, in time order (ties in the order they were scheduled): request arrivals (request i
 * goes to router {@code i mod K}; it decides, reserves, and the engine queues the request), engine
 * pass ends (tokens, first-token and finish milestones, which the owning router turns into {@code
 * PrefillCompleted} and {@code Released}; the pass's KV-event batch), deliveries of KV batches,
 * engine load reports (every {@code loadReportMicros}) and peers' reservation events to routers
 * after the propagation delay (at once when the delay is 0), lease expiry, and the chaos options (a
 * replica killed: removed from every router at once, its live requests re-decided by their routers
 * and counted from their first arrival, as client retries or, those past their first token, as
 * migrations ({@link LabKills}); batches dropped on the way to a router: delivered empty, so the
 * router's sequence stays gap-free and it relies on its predicted entries).
 *
 * <p>Visibility: each policy sees only what its peer sees ({@link Visibility}, declared by the
 * policy). Peers' reservation events reach a router only when the policy reads the reservation
 * plane; engine load reports arrive at the policy's own metrics interval when it names one; a
 * policy that runs as one global scheduler gets a single router that decides every arrival (the
 * others would only forward to it). KV events reach every router, after the propagation delay.
 *
 * <p>LoRA adapters ({@code --adapters}) and images ({@code --images}): what each policy's routers
 * see of a request (its keys with or without its image, the adapter steering of kvrouter's
 * policies) is {@link LabRequestView}'s.
 *
 * <p>Measures: the engines count cached prompt tokens ({@code hit_rate}); {@link LabMeasures}
 * counts {@code block_hit_rate} over trace blocks from each request's first placement, and (in
 * {@link SessionMeasures}) follow-ups cached, load CoV and the routers' index size.
 *
 * <p>Cost: O(arrivals × (prompt blocks + replicas)) for decisions, O(passes × running) for the
 * engines; memory: the engines' and routers' indexes of cached blocks. Single-threaded; one
 * instance per run.
 *
 * <p>This class is the event loop and its handlers; the queue ({@link LabEventQueue}), delivery to
 * the routers ({@link LabNetwork}), what a router sees of a request ({@link LabRequestView}), the
 * measures ({@link LabMeasures}), router and engine building ({@link LabRouters}) and the gates
 * ({@link LabGates}) are apart. Over 450 lines because it is one event loop with one short handler
 * per event kind.
 */
public final class LabSimulation {

  private static final int ARRIVAL = 0;
  private static final int PASS_END = 1;
  private static final int DELIVER = LabNetwork.DELIVER;
  private static final int TICK = 3;
  private static final int KILL = 4;
  private static final int GATE = 5;
  private static final int GATE_REPLY = 6;
  private static final int GATE_LEAVE = 7;
  private static final int HELD = 8;

  /** How often each router's heartbeat goes out: the ingress's reservation-mark-interval, 1 s. */
  private static final long MARK_MICROS = 1_000_000;

  private final Workload workload;
  private final PromptKeys keys;
  private final LabConfig config;
  private final String policy;

  /** Strict mode's gates, or null in broadcast mode. */
  private final LabGates gates;

  private final LabEventQueue queue = new LabEventQueue();
  private final Visibility visibility;
  private final KvTrackerCore[] routers;
  private final LabEngine[] engines;
  private final int[] generation;
  private final boolean[] dead;
  private final Map<String, Integer> replicaIndex = new HashMap<>();
  private final LabNetwork network;
  private final LabMeasures measures;
  private final long[] arrival;
  private int arrivalsLeft;
  // When the routers next send their heartbeats (virtual time, µs).
  private long nextMarkMicros;

  /** What this policy's routers see of each request. */
  private final LabRequestView view;

  /** The workload's programs (closed loop, program features, measures), or null for none. */
  private final LabPrograms programs;

  /** The ingress's session affinity ({@code +affinity}), or null when off. */
  private final LabSessions sessions;

  /** Whether a session's later requests run on its bound replica ({@code +keep}). */
  private final boolean keep;

  /** How a killed replica's requests go on, and what those cut mid-answer cost. */
  private LabKills kills = new LabKills(LabKills.OnKill.RETRY);

  /**
   * Whether the router of {@code policy} tells images apart ({@link LabRequestView#seesImages}).
   */
  static boolean seesImages(String policy) {
    return LabRequestView.seesImages(policy);
  }

  LabSimulation(Workload workload, PromptKeys keys, LabConfig config, String policy) {
    this.workload = workload;
    this.keys = keys;
    this.config = config;
    this.policy = policy;
    int n = config.replicas();
    LabPolicy variant = LabPolicy.parse(policy);
    this.gates = variant.strict() ? new LabGates() : null;
    this.view = LabRequestView.of(workload, keys, variant.policy());
    this.visibility = Policies.visibility(variant.policy());
    // The routers' own channels (SMG's mesh, Dynamo's replica sync) join them, and no other run's.
    try (PeerGroup group = PeerGroup.open(config.propagationDelayMicros())) {
      this.routers =
          LabRouters.routers(
              routerCount(config, visibility), variant.policy(), config.seed(), keys);
    }
    this.engines = new LabEngine[n];
    this.generation = new int[n];
    this.dead = new boolean[n];
    LabEngine.Listener listener = new Milestones();
    for (int i = 0; i < n; i++) {
      String id = "r" + i;
      replicaIndex.put(id, i);
      engines[i] = LabRouters.engine(i, id, config, listener);
      ReplicaInfo info = LabRouters.replica(id, config);
      for (KvTrackerCore router : routers) {
        router.replicaUp(info);
      }
    }
    this.network =
        new LabNetwork(
            routers,
            queue,
            config.propagationDelayMicros(),
            config.dropEvents(),
            visibility.peerReservations(),
            new SplittableRandom(config.seed() * 31 + policy.hashCode()),
            replicaIndex,
            dead);
    this.measures = new LabMeasures(workload, config);
    this.arrival = measures.arrival;
    LabProgramFeatures features = LabProgramFeatures.of(policy);
    this.programs =
        workload.programs() == null
            ? null
            : new LabPrograms(workload, keys, features, config.blockSize());
    this.sessions =
        !features.affinity()
            ? null
            : features.hold()
                ? LabSessions.holding(
                    config.effectiveCapacity() * config.blockSize(),
                    features.holdPercent(),
                    features.holdOnlyWhenFull(),
                    features.queuePercent() / 100.0)
                : features.bonusTokens() >= 0
                    ? LabSessions.withBonus(features.bonusTokens())
                    : LabSessions.defaults();
    this.keep = features.keep();
  }

  /** The killed replica's requests go on as {@code onKill} says (a client retry by default). */
  LabSimulation onKill(LabKills.OnKill onKill) {
    this.kills = new LabKills(onKill);
    return this;
  }

  /** What became of the requests the kill cut. */
  LabKills kills() {
    return kills;
  }

  /** Replays {@code workload} with {@code policy} on every router; returns what it did. */
  public static PolicyResult run(
      Workload workload, PromptKeys keys, LabConfig config, String policy) {
    return new LabSimulation(workload, keys, config, policy).run();
  }

  PolicyResult run() {
    long wall = System.nanoTime();
    java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
    long cpu = mx.getCurrentThreadCpuTime();
    // The engines report first: a cluster at rest has told its routers its replicas are idle
    // before the first request. After the first instant's decisions instead, the report would
    // show a burst's queues to every router that decides a few milliseconds later, which a report
    // every 250 ms rarely does.
    push(0, TICK, 0, 0, null);
    for (int i = 0; i < workload.size(); i++) {
      WorkloadRequest r = workload.get(i);
      arrival[i] = i < config.burst() ? 0 : r.arrivalMicros();
      if (programs == null || programs.openLoop(i)) {
        push(arrival[i], ARRIVAL, i % routers.length, i, null);
      }
    }
    arrivalsLeft = workload.size();
    network.introduce(0);
    if (config.killReplica() >= 0) {
      push(config.killAtMicros(), KILL, config.killReplica(), 0, null);
    }
    LabEventQueue.Event e;
    while ((e = queue.poll()) != null) {
      switch (e.kind()) {
        case ARRIVAL -> onArrival(e.time(), e.target(), e.arg());
        case PASS_END -> onPassEnd(e.time(), e.target(), e.arg());
        case DELIVER -> network.deliver(e.time(), e.target(), e.payload());
        case TICK -> onTick(e.time());
        case KILL -> onKill(e.time(), e.target());
        case GATE -> onGate(e.time(), (LabGates.Attempt) e.payload());
        case GATE_REPLY -> onGateReply(e.time(), e.arg(), (LabGates.Attempt) e.payload());
        case GATE_LEAVE -> gates.leave(e.target(), (String) e.payload());
        case HELD -> onHeld(e.time(), e.target(), e.arg(), (Long) e.payload());
        default -> throw new IllegalStateException("unknown event kind " + e.kind());
      }
    }
    PolicyResult result =
        measures.result(
            policy,
            engines,
            (System.nanoTime() - wall) / 1_000_000,
            (mx.getCurrentThreadCpuTime() - cpu) / 1_000_000);
    return programs == null ? result : result.withPrograms(programs.result(engines));
  }

  /** Schedules an event; all but ticks keep the run going ({@link LabNetwork} pushes its own). */
  private void push(long time, int kind, int target, int arg, Object payload) {
    queue.push(time, kind, target, arg, payload, kind != TICK);
  }

  // ------------------------------------------------------------------ visibility

  /** One router for a global scheduler, else as configured. */
  static int routerCount(LabConfig config, Visibility visibility) {
    return visibility.globalScheduler() ? 1 : config.routers();
  }

  /** Interval of engine load reports (and ticks): the policy's own refresh, else the lab's. */
  static long reportMicros(LabConfig config, Visibility visibility) {
    return visibility.metricsIntervalMillis() > 0
        ? visibility.metricsIntervalMillis() * 1000
        : config.loadReportMicros();
  }

  // ------------------------------------------------------------------ arrivals and decisions

  /**
   * A request reaches its router: decided now, or in broadcast mode after the wait the policy asks
   * for ({@code Coordination#holdMillis}), as the ingress's tracker does; when the policy reads
   * intents, the router's peers hear of a held one first ({@link LabNetwork#announce}), as an
   * ingress's tracker tells them.
   */
  private void onArrival(long now, int router, int index) {
    arrivalsLeft--;
    if (programs != null) {
      programs.arrived(index, now);
    }
    long hold =
        gates == null
            ? routers[router]
                .coordination()
                .holdMillis(request(index, "q" + index, Set.of(), Map.of()), now / 1000)
            : 0;
    if (hold > 0 && routers.length > 1 && routers[router].coordination().readsIntents()) {
      RouteIntent intent =
          routers[router]
              .coordination()
              .intentOf(
                  request(index, "q" + index, Set.of(), Map.of()), now / 1000 + hold, now / 1000);
      if (intent != null) {
        network.announce(now, router, intent);
      }
    }
    if (hold > 0) {
      push(now + hold * 1000, HELD, router, index, hold);
      return;
    }
    decide(now, router, index, "q" + index, true, Set.of(), Map.of(), 0);
  }

  /**
   * A hold of {@code heldMillis} ran out: decided now, unless the policy asks to wait longer for
   * what arrived meanwhile ({@code Coordination#holdMoreMillis}), as the ingress's tracker does.
   */
  private void onHeld(long now, int router, int index, long heldMillis) {
    long more =
        routers[router]
            .coordination()
            .holdMoreMillis(
                request(index, "q" + index, Set.of(), Map.of()), now / 1000, heldMillis);
    if (more > 0) {
      push(now + more * 1000, HELD, router, index, heldMillis + more);
      return;
    }
    decide(now, router, index, "q" + index, true, Set.of(), Map.of(), 0);
  }

  /** What {@code router} is asked to place for request {@code index}. */
  private RouteRequest request(
      int index, String requestId, Set<String> excluded, Map<String, Integer> gateCounts) {
    return request(index, requestId, excluded, gateCounts, view.steering(index, engines, dead));
  }

  /** What {@code router} is asked to place for request {@code index}, steered by {@code steer}. */
  private RouteRequest request(
      int index,
      String requestId,
      Set<String> excluded,
      Map<String, Integer> gateCounts,
      Steering steer) {
    return new RouteRequest(
        requestId,
        LabConfig.MODEL,
        routerKeys(index),
        view.routerPromptLength(index) + kills.carried(requestId),
        excluded,
        false,
        steer,
        gateCounts,
        0);
  }

  /**
   * Decides on {@code router} without the replicas in {@code excluded}, counting at least {@code
   * gateCounts} requests on the replicas whose gates turned the request away (strict mode), and
   * dispatches the request, or in strict mode sends it to the chosen replica's gate first.
   */
  private void decide(
      long now,
      int router,
      int index,
      String requestId,
      boolean first,
      Set<String> excluded,
      Map<String, Integer> gateCounts,
      int turnedAway) {
    Decision d =
        sessions == null
            ? place(now, router, request(index, requestId, excluded, gateCounts))
            : sessions.decide(
                requestId,
                workload.get(index).session(),
                view.promptLength(index),
                now / 1000,
                (bound, opens, held) ->
                    place(
                        now,
                        router,
                        request(
                            index,
                            requestId,
                            kept(bound, held, excluded),
                            gateCounts,
                            view.steering(
                                index,
                                engines,
                                dead,
                                bound,
                                opens,
                                sessions.affinityBonusTokens()))));
    if (!d.placed()) {
      throw new IllegalStateException("no replica left for " + requestId);
    }
    int replica = replicaIndex.get(d.chosen());
    measures.decided(replica, dead[replica]);
    network.broadcast(now, router, d.reserved());
    if (gates == null) {
      dispatch(now, router, index, requestId, first, replica);
      return;
    }
    int expected =
        LabGates.forced(turnedAway, d.ranked().size())
            ? Integer.MAX_VALUE
            : d.ranked().get(0).inFlight();
    push(
        now + gateHopMicros(),
        GATE,
        replica,
        0,
        new LabGates.Attempt(
            index, requestId, router, replica, expected, first, excluded, gateCounts, turnedAway));
  }

  /**
   * The replicas a request bound to {@code bound} may not run on: with {@code +keep} or when its
   * session is {@code held} there, every live replica but its bound one (when that one is alive),
   * else {@code excluded}.
   */
  private Set<String> kept(String bound, boolean held, Set<String> excluded) {
    Integer b = bound == null ? null : replicaIndex.get(bound);
    if (!(keep || held) || b == null || dead[b] || excluded.contains(bound)) {
      return excluded;
    }
    Set<String> others = new java.util.HashSet<>(excluded);
    for (LabEngine e : engines) {
      if (e.replica() != b) {
        others.add(e.replicaId());
      }
    }
    return others;
  }

  /**
   * {@code router} selects and reserves for {@code request}; strict mode holds the reservation back
   * from the peers until its gate admits it, as the ingress does (TrackerRouter): one turned away
   * never shows them load that was not placed.
   */
  private Decision place(long now, int router, RouteRequest request) {
    return gates == null
        ? routers[router].selectAndReserve(request, now / 1000)
        : routers[router].selectAndReserveUnannounced(request, now / 1000);
  }

  /** The keys of request {@code index} as this policy's router sees them. */
  long[] routerKeys(int index) {
    return view.routerKeys(index);
  }

  /** The request goes to its replica's engine. */
  private void dispatch(
      long now, int router, int index, String requestId, boolean first, int replica) {
    if (first) {
      measures.placedFirst(index, replica);
    }
    LabEngine engine = engines[replica];
    LabSequence seq =
        new LabSequence(
            index,
            requestId,
            router,
            keys.engineOf(index),
            view.promptLength(index) + kills.carried(requestId),
            Math.max(1, workload.get(index).outputLength()) - kills.carried(requestId),
            arrival[index]);
    seq.adapter = keys.adapter(index);
    seq.priority = programs == null ? 0 : programs.priority(index);
    engine.submit(seq);
    if (engine.busy()) {
      if (engine.interrupt(now)) {
        generation[replica]++;
        push(engine.passEnd(), PASS_END, replica, generation[replica], null);
      }
    } else {
      startPass(now, replica);
    }
  }

  // ------------------------------------------------------------------ strict mode

  /** One hop to or from a gate: the propagation delay (a gate lives on some ingress). */
  private long gateHopMicros() {
    return config.propagationDelayMicros();
  }

  private void onGate(long now, LabGates.Attempt a) {
    push(now + gateHopMicros(), GATE_REPLY, a.replica(), gates.admit(a), a);
  }

  /**
   * The gate's answer reached the router ({@code held} is -1 when admitted, else the requests the
   * gate held): admitted, the request goes to the engine; turned away, the reservation is given
   * back and the router decides again, counting at least {@code held} requests on that replica.
   */
  private void onGateReply(long now, int held, LabGates.Attempt a) {
    boolean admitted = held < 0;
    if (admitted && !dead[a.replica()]) {
      network.broadcast(now, a.router(), routers[a.router()].announce(a.requestId()));
      dispatch(now, a.router(), a.index(), a.requestId(), a.first(), a.replica());
      return;
    }
    String replicaId = engines[a.replica()].replicaId();
    network.broadcast(now, a.router(), routers[a.router()].released(a.requestId(), now / 1000));
    if (admitted) {
      gates.leave(a.replica(), a.requestId());
    }
    // Admitted on a replica that died meanwhile: tried elsewhere. Turned away: tried again,
    // counting what the gate held there.
    decide(
        now,
        a.router(),
        a.index(),
        a.requestId(),
        a.first(),
        admitted ? a.excludedNext(replicaId) : a.excluded(),
        admitted ? a.gateCounts() : a.gateCountsNext(replicaId, held),
        admitted ? a.turnedAway() : a.turnedAway() + 1);
  }

  private void startPass(long now, int replica) {
    long end = engines[replica].startPass(now);
    if (end >= 0) {
      generation[replica]++;
      push(end, PASS_END, replica, generation[replica], null);
    }
  }

  // ------------------------------------------------------------------ engines

  private void onPassEnd(long now, int replica, int gen) {
    if (dead[replica] || gen != generation[replica]) {
      return;
    }
    LabEngine engine = engines[replica];
    KvEventBatch batch = engine.completePass();
    if (batch != null) {
      network.publish(now, batch);
    }
    if (engine.hasWork()) {
      startPass(now, replica);
    }
  }

  /** Turns engine milestones into router lifecycle events and latency samples. */
  private final class Milestones implements LabEngine.Listener {
    @Override
    public void firstToken(LabEngine engine, LabSequence seq, long timeMicros) {
      measures.firstToken(seq.requestIndex, seq.arrivalMicros, timeMicros);
      if (programs != null) {
        programs.firstToken(seq.requestIndex, seq, seq.arrivalMicros, timeMicros);
      }
      measures.sessions.admitted(seq.requestIndex, seq.cachedPromptTokens, seq.promptLength);
      kills.firstToken(seq, timeMicros);
      if (sessions != null) {
        sessions.prefillCompleted(seq.requestId);
      }
      network.broadcast(
          timeMicros,
          seq.router,
          routers[seq.router].prefillCompleted(seq.requestId, timeMicros / 1000));
    }

    @Override
    public void finished(LabEngine engine, LabSequence seq, long timeMicros) {
      measures.finished(seq.requestIndex, seq.arrivalMicros, timeMicros);
      kills.finished(seq, timeMicros);
      if (gates != null) {
        push(timeMicros + gateHopMicros(), GATE_LEAVE, engine.replica(), 0, seq.requestId);
      }
      network.broadcast(
          timeMicros, seq.router, routers[seq.router].released(seq.requestId, timeMicros / 1000));
      if (sessions != null) {
        sessions.released(seq.requestId);
      }
      if (programs != null) {
        // The turns that waited for this reply are sent after their tool runs (closed loop).
        for (long[] next :
            programs.finished(seq.requestIndex, engine, seq.arrivalMicros, timeMicros)) {
          int j = (int) next[0];
          arrival[j] = next[1];
          push(arrival[j], ARRIVAL, j % routers.length, j, null);
        }
      }
    }
  }

  // ------------------------------------------------------------------ load reports, chaos

  private void onTick(long now) {
    for (LabEngine engine : engines) {
      if (dead[engine.replica()]) {
        continue;
      }
      network.report(now, LabRouters.load(engine, now));
    }
    for (int r = 0; r < routers.length; r++) {
      for (ReservationEvent ended : routers[r].expire(now / 1000)) {
        network.broadcast(now, r, ended);
      }
      network.shareTiming(now, r);
      if (now >= nextMarkMicros) {
        network.heartbeat(now, r);
      }
    }
    if (now >= nextMarkMicros) {
      nextMarkMicros = now + MARK_MICROS;
    }
    if (measures.sampleDue(now)) {
      measures.sampleLoad(now, engines);
      measures.sessions.sample(routers);
    }
    boolean busy = arrivalsLeft > 0 || queue.workPending();
    if (busy) {
      push(now + reportMicros(config, visibility), TICK, 0, 0, null);
    } else {
      measures.sampleLoad(now, engines);
      measures.sessions.sample(routers);
    }
  }

  private void onKill(long now, int replica) {
    if (dead[replica]) {
      return;
    }
    dead[replica] = true;
    generation[replica]++;
    List<LabSequence> live = engines[replica].kill();
    for (KvTrackerCore router : routers) {
      router.replicaDown(engines[replica].replicaId());
    }
    for (LabSequence s : live) {
      network.broadcast(now, s.router, routers[s.router].released(s.requestId, now / 1000));
      if (gates != null) {
        gates.leave(replica, s.requestId);
      }
      decide(now, s.router, s.requestIndex, kills.cut(s, now), false, Set.of(), Map.of(), 0);
    }
  }
}

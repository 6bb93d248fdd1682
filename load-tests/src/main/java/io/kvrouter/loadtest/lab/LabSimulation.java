package io.kvrouter.loadtest.lab;

import io.kvrouter.loadtest.workload.BlockHitCounter;
import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.WorkloadRequest;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.Tier;
import io.kvrouter.tracker.Decision;
import io.kvrouter.tracker.KvTrackerCore;
import io.kvrouter.tracker.RouteRequest;
import io.kvrouter.tracker.policy.Policies;
import io.kvrouter.tracker.policy.PolicyConfig;
import io.kvrouter.tracker.policy.Visibility;
import io.kvrouter.tracker.steering.Steering;
import java.util.HashMap;
import java.util.HashSet;
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
 * and counted from their first arrival; batches dropped on the way to a router: delivered empty, so
 * the router's sequence stays gap-free and it relies on its predicted entries).
 *
 * <p>Visibility: each policy sees only what its peer sees ({@link Visibility}, declared by the
 * policy). Peers' reservation events reach a router only when the policy reads the reservation
 * plane; engine load reports arrive at the policy's own metrics interval when it names one; a
 * policy that runs as one global scheduler gets a single router that decides every arrival (the
 * others would only forward to it). KV events reach every router, after the propagation delay.
 *
 * <p>LoRA adapters ({@code --adapters}): each request runs with the adapter {@link PromptKeys}
 * names (its keys include it, as vLLM's block hashes and every peer's index do: Dynamo hashes
 * {@code lora_name} into its block hashes); kvrouter's policies also get the ingress's adapter
 * steering ({@code SteeringRule}: the replicas holding the adapter now, and the ingress's default
 * load penalty of 4,096 tokens), the peers none (llm-d's precise-prefix configuration has no LoRA
 * scorer, {@code deploy/config/epp-precise-prefix-cache-config.yaml}). The holders are the engines'
 * loaded adapters at decision time (the ingress learns them from its agents every few seconds).
 *
 * <p>Images ({@code --images}): a request that shows one holds its placeholder tokens too (prefill
 * counts them) and runs on the engine with its image-keyed blocks ({@link PromptKeys}); its router
 * gets those keys, or the keys and length of its text alone when the peer does not see images
 * ({@link #seesImages}).
 *
 * <p>Measures: the engines count cached prompt tokens ({@code hit_rate}); a {@link BlockHitCounter}
 * fed each request's first decision counts {@code block_hit_rate} over trace blocks, holding at
 * most {@code capacityBlocks × blockSize ÷ traceBlockTokens} trace blocks per replica (LRU) when
 * the engines' capacity is limited.
 *
 * <p>Cost: O(arrivals × (prompt blocks + replicas)) for decisions, O(passes × running) for the
 * engines; memory: the engines' and routers' indexes of cached blocks. Single-threaded; one
 * instance per run.
 *
 * <p>Over 400 lines because it is one discrete-event loop whose handlers (arrivals, gates, passes,
 * deliveries, ticks, kills) all act on the same routers, engines and queue; the queue ({@link
 * LabEventQueue}), the measures ({@link LabMeasures}), router building ({@link LabRouters}) and the
 * gates ({@link LabGates}) are apart.
 */
public final class LabSimulation {

  private static final int ARRIVAL = 0;
  private static final int PASS_END = 1;
  private static final int DELIVER = 2;
  private static final int TICK = 3;
  private static final int KILL = 4;
  private static final int GATE = 5;
  private static final int GATE_REPLY = 6;
  private static final int GATE_LEAVE = 7;

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
  private final BlockHitCounter blockHits;
  private final SplittableRandom chaos;
  private final LabMeasures measures;
  private final long[] arrival;
  private int arrivalsLeft;

  /** True when requests naming an adapter are steered by the ingress's adapter rule. */
  private final boolean steersAdapters;

  /** True when the policy's router keys an image's blocks with the image ({@link #seesImages}). */
  private final boolean seesImages;

  /**
   * Whether the router of {@code policy} (its base name) tells images apart, as it ships. kvrouter
   * keys them as the engine does (the ingress's {@code MediaPrompt}). Dynamo's KV router takes the
   * engine's {@code mm_hash} per block in its multimodal router worker ({@code block_mm_infos},
   * ai-dynamo/dynamo {@code examples/backends/vllm/mm_router_worker/README.md}). llm-d's indexer
   * folds the engine's multimodal hashes into its block keys, from the events' {@code extra_keys}
   * and, for a request, from the placeholders of the tokenized prompt (llm-d/llm-d-kv-cache at
   * 7be76e11, {@code docs/architecture.md}, "Multimodal, LoRA, and Hybrid Attention"; {@code
   * pkg/kvcache/kvblock/extra_keys.go}). TGI's kvrouter inserts the whole request body, image URL
   * included, into its trie ({@code kvrouter/src/lib.rs}). The others see the text only: SGLang's
   * gateway routes on the text parts of a chat's messages, image parts left out (lightseekorg/smg
   * at 73da68ca, {@code crates/protocols/src/chat.rs}, {@code extract_text_for_routing} and {@code
   * MessageContent::append_text_to}), CHWBL hashes the first 100 characters of text and Preble
   * matches text tokens; they get the prompt's keys without the image ({@link PromptKeys#textOf})
   * and its text length. Round robin, random and least loaded read no keys.
   */
  static boolean seesImages(String policy) {
    return policy.startsWith("kvrouter")
        || policy.startsWith("dynamo_kv")
        || policy.equals("llmd_precise")
        || policy.equals("tgi_trie");
  }

  /** The ingress's {@code kvrouter.lora.load-penalty-tokens} default. */
  static final double ADAPTER_LOAD_PENALTY_TOKENS = 4096;

  LabSimulation(Workload workload, PromptKeys keys, LabConfig config, String policy) {
    this.workload = workload;
    this.keys = keys;
    this.config = config;
    this.policy = policy;
    int n = config.replicas();
    LabPolicy variant = LabPolicy.parse(policy);
    this.gates = variant.strict() ? new LabGates() : null;
    this.steersAdapters = variant.policy().startsWith("kvrouter");
    this.seesImages = seesImages(variant.policy());
    this.visibility = Policies.visibility(variant.policy());
    this.routers = new KvTrackerCore[routerCount(config, visibility)];
    long expected = Math.min(1 << 22, Math.max(1 << 16, totalBlocks(keys) / 2));
    for (int r = 0; r < routers.length; r++) {
      routers[r] =
          LabRouters.router(
              "ingress-" + r,
              variant.policy(),
              PolicyConfig.defaults(),
              config.seed(),
              (int) expected);
    }
    this.engines = new LabEngine[n];
    this.generation = new int[n];
    this.dead = new boolean[n];
    LabEngine.Listener listener = new Milestones();
    for (int i = 0; i < n; i++) {
      String id = "r" + i;
      replicaIndex.put(id, i);
      engines[i] =
          new LabEngine(
              i,
              id,
              config.blockSize(),
              config.effectiveCapacity(),
              config.maxNumSeqs(),
              config.maxBatchedTokens(),
              config.cpuBlocks(),
              config.cpuLoadMicrosPerBlock(),
              listener);
      if (config.adapters() > 0) {
        engines[i].withAdapters(config.adapterSlots(), config.adapterLoadMicros());
      }
      ReplicaInfo info =
          new ReplicaInfo(
              id,
              0,
              LabConfig.MODEL,
              "sim://" + id,
              config.blockSize(),
              config.cpuBlocks() > 0 ? List.of(Tier.GPU, Tier.CPU) : List.of(Tier.GPU),
              "both",
              true,
              true);
      for (KvTrackerCore router : routers) {
        router.replicaUp(info);
      }
    }
    long cap =
        config.capacityBlocks() == 0
            ? 0
            : Math.max(
                1,
                config.capacityBlocks() * config.blockSize() / Math.max(1, workload.blockTokens()));
    this.blockHits =
        workload.blockTokens() > 0
            ? new BlockHitCounter(workload, n, (int) Math.min(Integer.MAX_VALUE, cap))
            : null;
    this.chaos = new SplittableRandom(config.seed() * 31 + policy.hashCode());
    this.measures = new LabMeasures(workload.size(), n, workload.durationMicros());
    this.arrival = measures.arrival;
  }

  private static long totalBlocks(PromptKeys keys) {
    long t = 0;
    for (int i = 0; i < keys.size(); i++) {
      t += keys.of(i).length;
    }
    return t;
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
    for (int i = 0; i < workload.size(); i++) {
      WorkloadRequest r = workload.get(i);
      arrival[i] = i < config.burst() ? 0 : r.arrivalMicros();
      push(arrival[i], ARRIVAL, i % routers.length, i, null);
    }
    arrivalsLeft = workload.size();
    if (config.killReplica() >= 0) {
      push(config.killAtMicros(), KILL, config.killReplica(), 0, null);
    }
    push(0, TICK, 0, 0, null);
    LabEventQueue.Event e;
    while ((e = queue.poll()) != null) {
      switch (e.kind()) {
        case ARRIVAL -> onArrival(e.time(), e.target(), e.arg());
        case PASS_END -> onPassEnd(e.time(), e.target(), e.arg());
        case DELIVER -> deliver(e.time(), e.target(), e.payload());
        case TICK -> onTick(e.time());
        case KILL -> onKill(e.time(), e.target());
        case GATE -> onGate(e.time(), (LabGates.Attempt) e.payload());
        case GATE_REPLY -> onGateReply(e.time(), e.arg() == 1, (LabGates.Attempt) e.payload());
        case GATE_LEAVE -> gates.leave(e.target(), (String) e.payload());
        default -> throw new IllegalStateException("unknown event kind " + e.kind());
      }
    }
    return measures.result(
        policy,
        engines,
        blockHits,
        (System.nanoTime() - wall) / 1_000_000,
        (mx.getCurrentThreadCpuTime() - cpu) / 1_000_000);
  }

  /** Events that keep the run going; ticks and the load reports they send do not. */
  private static boolean isWork(int kind, Object payload) {
    return kind != TICK && !(payload instanceof ReplicaLoad);
  }

  private void push(long time, int kind, int target, int arg, Object payload) {
    queue.push(time, kind, target, arg, payload, isWork(kind, payload));
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

  private void onArrival(long now, int router, int index) {
    arrivalsLeft--;
    decide(now, router, index, "q" + index, true, Set.of(), 0);
  }

  /**
   * Decides on {@code router}, leaving out the replicas in {@code rejected} (strict mode's gates
   * turned the request away there this round), and dispatches the request, or in strict mode sends
   * it to the chosen replica's gate first.
   */
  private void decide(
      long now,
      int router,
      int index,
      String requestId,
      boolean first,
      Set<String> rejected,
      int round) {
    Decision d =
        routers[router].selectAndReserve(
            new RouteRequest(
                requestId,
                LabConfig.MODEL,
                routerKeys(index),
                seesImages ? promptLength(index) : Math.max(1, workload.get(index).inputLength()),
                rejected,
                false,
                steering(index)),
            now / 1000);
    if (!d.placed()) {
      throw new IllegalStateException("no replica left for " + requestId);
    }
    int replica = replicaIndex.get(d.chosen());
    measures.decided(replica, dead[replica]);
    broadcast(now, router, d.reserved());
    if (gates == null) {
      dispatch(now, router, index, requestId, first, replica);
      return;
    }
    boolean last = d.ranked().size() <= 1;
    int expected =
        LabGates.forceNext(last, round) ? Integer.MAX_VALUE : d.ranked().get(0).inFlight();
    push(
        now + gateHopMicros(),
        GATE,
        replica,
        0,
        new LabGates.Attempt(
            index, requestId, router, replica, expected, first, last, rejected, round));
  }

  /** The keys of request {@code index} as this policy's router sees them. */
  long[] routerKeys(int index) {
    return seesImages ? keys.of(index) : keys.textOf(index);
  }

  /** The adapter steering of request {@code index}: for kvrouter's policies, when it names one. */
  private Steering steering(int index) {
    String adapter = keys.adapter(index);
    if (adapter == null || !steersAdapters) {
      return Steering.NONE;
    }
    Set<String> holders = new HashSet<>();
    for (LabEngine e : engines) {
      if (!dead[e.replica()] && e.holdsAdapter(adapter)) {
        holders.add(e.replicaId());
      }
    }
    return new Steering(null, 0, 0, null, holders, ADAPTER_LOAD_PENALTY_TOKENS);
  }

  private int promptLength(int index) {
    return Math.max(1, workload.get(index).inputLength() + keys.imageTokens(index));
  }

  /** The request goes to its replica's engine. */
  private void dispatch(
      long now, int router, int index, String requestId, boolean first, int replica) {
    if (first && blockHits != null) {
      blockHits.record(index, replica);
    }
    LabEngine engine = engines[replica];
    LabSequence seq =
        new LabSequence(
            index,
            requestId,
            router,
            keys.of(index),
            promptLength(index),
            Math.max(1, workload.get(index).outputLength()),
            arrival[index]);
    seq.adapter = keys.adapter(index);
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
    push(now + gateHopMicros(), GATE_REPLY, a.replica(), gates.admit(a) ? 1 : 0, a);
  }

  /**
   * The gate's answer reached the router: admitted, the request goes to the engine; turned away,
   * the reservation is given back and the router decides again without that replica, or, when it
   * was the last candidate, starts another round over all of them.
   */
  private void onGateReply(long now, boolean admitted, LabGates.Attempt a) {
    if (admitted && !dead[a.replica()]) {
      dispatch(now, a.router(), a.index(), a.requestId(), a.first(), a.replica());
      return;
    }
    if (admitted) {
      gates.leave(a.replica(), a.requestId());
    }
    broadcast(now, a.router(), routers[a.router()].released(a.requestId(), now / 1000));
    Set<String> rejected = new HashSet<>(a.rejected());
    int round = a.round();
    if (a.last()) {
      rejected.clear();
      round++;
    } else {
      rejected.add(engines[a.replica()].replicaId());
    }
    decide(now, a.router(), a.index(), a.requestId(), a.first(), rejected, round);
  }

  private void startPass(long now, int replica) {
    long end = engines[replica].startPass(now);
    if (end >= 0) {
      generation[replica]++;
      push(end, PASS_END, replica, generation[replica], null);
    }
  }

  private void broadcast(long now, int from, ReservationEvent event) {
    if (event == null || routers.length == 1 || !visibility.peerReservations()) {
      return;
    }
    for (int r = 0; r < routers.length; r++) {
      if (r != from) {
        if (config.propagationDelayMicros() == 0) {
          routers[r].applyReservation(event, now / 1000);
        } else {
          push(now + config.propagationDelayMicros(), DELIVER, r, 0, event);
        }
      }
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
      for (int r = 0; r < routers.length; r++) {
        KvEventBatch b = batch;
        if (config.dropEvents() > 0 && chaos.nextDouble() < config.dropEvents()) {
          b = new KvEventBatch(batch.replicaId(), batch.epoch(), batch.seq(), new KvEvent[0]);
        }
        if (config.propagationDelayMicros() == 0) {
          routers[r].apply(b);
        } else {
          push(now + config.propagationDelayMicros(), DELIVER, r, 0, b);
        }
      }
    }
    if (engine.hasWork()) {
      startPass(now, replica);
    }
  }

  private void deliver(long now, int router, Object payload) {
    if (payload instanceof ReplicaLoad load) {
      if (!dead[replicaIndex.get(load.replicaId())]) {
        routers[router].loadReported(load);
      }
    } else if (payload instanceof KvEventBatch b) {
      Integer replica = replicaIndex.get(b.replicaId());
      if (replica != null && !dead[replica]) {
        routers[router].apply(b);
      }
    } else {
      routers[router].applyReservation((ReservationEvent) payload, now / 1000);
    }
  }

  /** Turns engine milestones into router lifecycle events and latency samples. */
  private final class Milestones implements LabEngine.Listener {
    @Override
    public void firstToken(LabEngine engine, LabSequence seq, long timeMicros) {
      measures.firstToken(seq.requestIndex, seq.arrivalMicros, timeMicros);
      broadcast(
          timeMicros,
          seq.router,
          routers[seq.router].prefillCompleted(seq.requestId, timeMicros / 1000));
    }

    @Override
    public void finished(LabEngine engine, LabSequence seq, long timeMicros) {
      measures.finished(seq.requestIndex, seq.arrivalMicros, timeMicros);
      if (gates != null) {
        push(timeMicros + gateHopMicros(), GATE_LEAVE, engine.replica(), 0, seq.requestId);
      }
      broadcast(
          timeMicros, seq.router, routers[seq.router].released(seq.requestId, timeMicros / 1000));
    }
  }

  // ------------------------------------------------------------------ load reports, chaos

  private void onTick(long now) {
    for (LabEngine engine : engines) {
      if (dead[engine.replica()]) {
        continue;
      }
      ReplicaLoad load = LabRouters.load(engine, now);
      for (int r = 0; r < routers.length; r++) {
        if (config.propagationDelayMicros() == 0) {
          routers[r].loadReported(load);
        } else {
          push(now + config.propagationDelayMicros(), DELIVER, r, 0, load);
        }
      }
    }
    for (int r = 0; r < routers.length; r++) {
      for (ReservationEvent ended : routers[r].expire(now / 1000)) {
        broadcast(now, r, ended);
      }
    }
    if (measures.sampleDue(now)) {
      measures.sampleLoad(now, engines);
    }
    boolean busy = arrivalsLeft > 0 || queue.workPending();
    if (busy) {
      push(now + reportMicros(config, visibility), TICK, 0, 0, null);
    } else {
      measures.sampleLoad(now, engines);
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
      broadcast(now, s.router, routers[s.router].released(s.requestId, now / 1000));
      if (gates != null) {
        gates.leave(replica, s.requestId);
      }
      decide(now, s.router, s.requestIndex, s.requestId + "+", false, Set.of(), 0);
    }
  }
}

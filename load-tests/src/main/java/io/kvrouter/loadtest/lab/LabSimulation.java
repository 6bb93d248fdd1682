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
import io.kvrouter.tracker.TrackerConfig;
import io.kvrouter.tracker.policy.Policies;
import io.kvrouter.tracker.policy.PolicyConfig;
import io.kvrouter.tracker.policy.Visibility;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
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
 * <p>Measures: the engines count cached prompt tokens ({@code hit_rate}); a {@link BlockHitCounter}
 * fed each request's first decision counts {@code block_hit_rate} over trace blocks, holding at
 * most {@code capacityBlocks × blockSize ÷ traceBlockTokens} trace blocks per replica (LRU) when
 * the engines' capacity is limited.
 *
 * <p>Cost: O(arrivals × (prompt blocks + replicas)) for decisions, O(passes × running) for the
 * engines; memory: the engines' and routers' indexes of cached blocks. Single-threaded; one
 * instance per run.
 */
public final class LabSimulation {

  private static final int ARRIVAL = 0;
  private static final int PASS_END = 1;
  private static final int DELIVER = 2;
  private static final int TICK = 3;
  private static final int KILL = 4;

  /** One scheduled event; {@code order} keeps ties in scheduling order. */
  private record Ev(long time, long order, int kind, int target, int arg, Object payload) {}

  private final Workload workload;
  private final PromptKeys keys;
  private final LabConfig config;
  private final String policy;
  private final PriorityQueue<Ev> queue =
      new PriorityQueue<>(
          (a, b) ->
              a.time != b.time ? Long.compare(a.time, b.time) : Long.compare(a.order, b.order));
  private long order;
  private long pendingWork;
  private final Visibility visibility;
  private final KvTrackerCore[] routers;
  private final LabEngine[] engines;
  private final int[] generation;
  private final boolean[] dead;
  private final Map<String, Integer> replicaIndex = new HashMap<>();
  private final BlockHitCounter blockHits;
  private final SplittableRandom chaos;
  private final long[] arrival;
  private final double[] ttftMillis;
  private final double[] e2eMillis;
  private final long[] perReplicaDecisions;
  private long decisions;
  private long decisionsToKilled;
  private long completed;
  private long lastFinish;
  private int arrivalsLeft;
  private final List<double[]> loadSeries = new ArrayList<>();
  private final List<Double> loadSeconds = new ArrayList<>();
  private long[] lastPrefill;
  private long lastSampleMicros;
  private final long sampleMicros;

  LabSimulation(Workload workload, PromptKeys keys, LabConfig config, String policy) {
    this.workload = workload;
    this.keys = keys;
    this.config = config;
    this.policy = policy;
    int n = config.replicas();
    this.visibility = Policies.visibility(policy);
    this.routers = new KvTrackerCore[routerCount(config, visibility)];
    long expected = Math.min(1 << 22, Math.max(1 << 16, totalBlocks(keys) / 2));
    for (int r = 0; r < routers.length; r++) {
      TrackerConfig base = TrackerConfig.defaults("ingress-" + r);
      TrackerConfig tc =
          new TrackerConfig(
              base.ingressId(),
              policy,
              PolicyConfig.defaults(),
              config.seed(),
              base.leaseMillis(),
              base.predictedTtlMillis(),
              base.approximateTtlMillis(),
              (int) expected);
      routers[r] = new KvTrackerCore(tc);
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
              listener);
      ReplicaInfo info =
          new ReplicaInfo(
              id,
              0,
              LabConfig.MODEL,
              "sim://" + id,
              config.blockSize(),
              List.of(Tier.GPU),
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
    int count = workload.size();
    this.arrival = new long[count];
    this.ttftMillis = new double[count];
    this.e2eMillis = new double[count];
    Arrays.fill(ttftMillis, -1);
    this.perReplicaDecisions = new long[n];
    this.lastPrefill = new long[n];
    long span = count == 0 ? 1 : Math.max(1, workload.durationMicros());
    this.sampleMicros = Math.max(1_000_000, span / 200);
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
    Ev e;
    while ((e = queue.poll()) != null) {
      if (isWork(e.kind, e.payload)) {
        pendingWork--;
      }
      switch (e.kind) {
        case ARRIVAL -> onArrival(e.time, e.target, e.arg);
        case PASS_END -> onPassEnd(e.time, e.target, e.arg);
        case DELIVER -> deliver(e.time, e.target, e.payload);
        case TICK -> onTick(e.time);
        case KILL -> onKill(e.time, e.target);
        default -> throw new IllegalStateException("unknown event kind " + e.kind);
      }
    }
    return result(
        (System.nanoTime() - wall) / 1_000_000, (mx.getCurrentThreadCpuTime() - cpu) / 1_000_000);
  }

  /** Events that keep the run going; ticks and the load reports they send do not. */
  private static boolean isWork(int kind, Object payload) {
    return kind != TICK && !(payload instanceof ReplicaLoad);
  }

  private void push(long time, int kind, int target, int arg, Object payload) {
    if (isWork(kind, payload)) {
      pendingWork++;
    }
    queue.add(new Ev(time, order++, kind, target, arg, payload));
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
    WorkloadRequest r = workload.get(index);
    decide(
        now,
        router,
        index,
        "q" + index,
        true,
        Math.max(1, r.inputLength()),
        Math.max(1, r.outputLength()));
  }

  private void decide(
      long now,
      int router,
      int index,
      String requestId,
      boolean first,
      int promptLength,
      int outputLength) {
    long[] k = keys.of(index);
    Decision d =
        routers[router].selectAndReserve(
            new RouteRequest(requestId, LabConfig.MODEL, k, promptLength), now / 1000);
    if (!d.placed()) {
      throw new IllegalStateException("no replica left for " + requestId);
    }
    int replica = replicaIndex.get(d.chosen());
    decisions++;
    perReplicaDecisions[replica]++;
    if (dead[replica]) {
      decisionsToKilled++;
    }
    if (first && blockHits != null) {
      blockHits.record(index, replica);
    }
    broadcast(now, router, d.reserved());
    LabEngine engine = engines[replica];
    engine.submit(
        new LabSequence(index, requestId, router, k, promptLength, outputLength, arrival[index]));
    if (engine.busy()) {
      if (engine.interrupt(now)) {
        generation[replica]++;
        push(engine.passEnd(), PASS_END, replica, generation[replica], null);
      }
    } else {
      startPass(now, replica);
    }
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
      if (ttftMillis[seq.requestIndex] < 0) {
        ttftMillis[seq.requestIndex] = (timeMicros - seq.arrivalMicros) / 1000.0;
      }
      broadcast(
          timeMicros,
          seq.router,
          routers[seq.router].prefillCompleted(seq.requestId, timeMicros / 1000));
    }

    @Override
    public void finished(LabEngine engine, LabSequence seq, long timeMicros) {
      e2eMillis[seq.requestIndex] = (timeMicros - seq.arrivalMicros) / 1000.0;
      completed++;
      lastFinish = Math.max(lastFinish, timeMicros);
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
      ReplicaLoad load =
          new ReplicaLoad(
              engine.replicaId(),
              0,
              engine.runningCount(),
              engine.waitingCount(),
              engine.kvUsage(),
              engine.prefixQueries(),
              engine.prefixHits(),
              now / 1000);
      for (int r = 0; r < routers.length; r++) {
        if (config.propagationDelayMicros() == 0) {
          routers[r].loadReported(load);
        } else {
          push(now + config.propagationDelayMicros(), DELIVER, r, 0, load);
        }
      }
    }
    for (KvTrackerCore router : routers) {
      router.expire(now / 1000);
    }
    if (now - lastSampleMicros >= sampleMicros) {
      sampleLoad(now);
    }
    boolean busy = arrivalsLeft > 0 || pendingWork > 0;
    if (busy) {
      push(now + reportMicros(config, visibility), TICK, 0, 0, null);
    } else {
      sampleLoad(now);
    }
  }

  private void sampleLoad(long now) {
    double seconds = (now - lastSampleMicros) / 1e6;
    if (seconds <= 0) {
      return;
    }
    double[] row = new double[engines.length];
    for (int i = 0; i < engines.length; i++) {
      long p = engines[i].uncachedPrefillTokens();
      row[i] = (p - lastPrefill[i]) / seconds;
      lastPrefill[i] = p;
    }
    loadSeries.add(row);
    loadSeconds.add(now / 1e6);
    lastSampleMicros = now;
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
      decide(now, s.router, s.requestIndex, s.requestId + "+", false, s.promptLength, s.maxTokens);
    }
  }

  // ------------------------------------------------------------------ result

  private PolicyResult result(long wallMillis, long cpuMillis) {
    long queries = 0;
    long hits = 0;
    long[] prefill = new long[engines.length];
    double sum = 0;
    double max = 0;
    for (int i = 0; i < engines.length; i++) {
      queries += engines[i].prefixQueries();
      hits += engines[i].prefixHits();
      prefill[i] = engines[i].uncachedPrefillTokens();
      sum += prefill[i];
      max = Math.max(max, prefill[i]);
    }
    double mean = sum / engines.length;
    double[] ttft = Arrays.stream(ttftMillis).filter(v -> v >= 0).toArray();
    double[] e2e = new double[(int) completed];
    int j = 0;
    for (int i = 0; i < e2eMillis.length && j < e2e.length; i++) {
      if (ttftMillis[i] >= 0 && e2eMillis[i] > 0) {
        e2e[j++] = e2eMillis[i];
      }
    }
    e2e = Arrays.copyOf(e2e, j);
    long first = arrival.length == 0 ? 0 : Arrays.stream(arrival).min().getAsLong();
    double span = (lastFinish - first) / 1e6;
    Latency ttftSummary = Latency.of(ttft);
    return new PolicyResult(
        policy,
        queries == 0 ? 0 : (double) hits / queries,
        blockHits == null ? null : blockHits.rates().blockHitRate(),
        ttftSummary,
        Latency.of(e2e),
        span <= 0 ? 0 : completed / span,
        mean == 0 ? 1 : max / mean,
        decisions,
        completed,
        perReplicaDecisions,
        prefill,
        decisionsToKilled,
        ttft,
        List.copyOf(loadSeries),
        loadSeconds.stream().mapToDouble(Double::doubleValue).toArray(),
        wallMillis,
        cpuMillis);
  }
}

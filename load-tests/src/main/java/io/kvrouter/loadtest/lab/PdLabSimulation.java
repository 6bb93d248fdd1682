package io.kvrouter.loadtest.lab;

import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.Tier;
import io.kvrouter.tracker.Decision;
import io.kvrouter.tracker.KvTrackerCore;
import io.kvrouter.tracker.RouteRequest;
import io.kvrouter.tracker.policy.Policies;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One {@link PdScheme}'s replay of a workload on a disaggregated cluster in virtual time: a prefill
 * pool and a decode pool of engines, each engine with {@code dpSize} data-parallel ranks (each rank
 * a {@link LabEngine} with its own cache and scheduler), and one router per pool (a {@link
 * KvTrackerCore} fed by its pool's KV events and load reports, as one ingress tracker sees a pool).
 *
 * <p>A request either is decoded where it is placed and prefilled there (skipped hop), or is
 * prefilled on a prefill rank (one output token, released when done), its prompt's KV is pulled by
 * the decode rank (the blocks that rank lacks, at {@code transfer}'s speed) and it is decoded there
 * from its last prompt token, as vLLM's NIXL connector runs it. TTFT is from arrival to the decode
 * rank's first token, TPOT the mean time per later token, hit rates per pool the engines' own
 * (local cache hits over prompt tokens; transferred blocks are not hits).
 *
 * <p>Each scheme's routers see what its peer sees ({@link io.kvrouter.tracker.policy.Visibility}):
 * predicted blocks as the tracker honours them, engine load at the decode policy's refresh interval
 * (every scheme runs one policy on both pools). One router per pool, so other routers' reservations
 * do not arise.
 *
 * <p>Cost: as {@link LabSimulation}, plus one cache probe per transfer. Single-threaded; one
 * instance per run.
 *
 * <p>433 lines, over 400 with its {@link Cluster} and {@link Result} records (about 45 lines),
 * which callers (the CLI's {@code pd-lab}) name as members of this class; the event loop itself is
 * about 380 lines and shares its queue, routers and engines with {@link LabSimulation} ({@link
 * LabEventQueue}, {@link LabRouters}, {@link LabEngine}). Since this reason was first written it
 * grew only by constructor arguments: the CPU tier, adapters and images of the policy lab are not
 * modelled here.
 */
public final class PdLabSimulation {

  /**
   * The disaggregated cluster.
   *
   * @param prefillEngines engines in the prefill pool
   * @param decodeEngines engines in the decode pool
   * @param dpSize data-parallel ranks per engine
   * @param kvBytesPerToken KV bytes per token a transfer moves
   * @param transferBytesPerSecond transfer bandwidth
   */
  public record Cluster(
      int prefillEngines,
      int decodeEngines,
      int dpSize,
      long kvBytesPerToken,
      double transferBytesPerSecond) {
    public Cluster {
      if (prefillEngines < 1 || decodeEngines < 1 || dpSize < 1) {
        throw new IllegalArgumentException("need prefill and decode engines and dpSize >= 1");
      }
    }
  }

  /**
   * What a scheme did.
   *
   * @param requests requests in the workload
   * @param completed requests decoded to their last token
   * @param disaggregated share of requests that took the prefill hop
   * @param prefillHitRate prefill pool's cached prompt tokens over its prompt tokens
   * @param decodeHitRate decode pool's locally cached prompt tokens over its prompt tokens
   * @param transferredGb KV moved from prefill to decode ranks
   * @param rankImbalance max over mean of prompt tokens computed per decode rank
   */
  public record Result(
      String scheme,
      int requests,
      int completed,
      double disaggregated,
      Latency ttft,
      Latency tpot,
      Latency e2e,
      double prefillHitRate,
      double decodeHitRate,
      double transferredGb,
      double rankImbalance) {}

  private static final int ARRIVAL = 0;
  private static final int PASS_END = 1;
  private static final int TRANSFERRED = 2;
  private static final int TICK = 3;

  private final Workload workload;
  private final PromptKeys keys;
  private final LabConfig lab;
  private final Cluster cluster;
  private final PdScheme scheme;
  private final LabEventQueue queue = new LabEventQueue();
  private final KvTrackerCore prefillRouter;
  private final KvTrackerCore decodeRouter;

  /** How often both pools' routers get load reports: the decode policy's own refresh, else ours. */
  private final long reportMicros;

  /** Prefill ranks first, then decode ranks; rank {@code k} of engine {@code e} of a pool. */
  private final LabEngine[] ranks;

  private final int[] generation;
  private final Map<String, Integer> index = new HashMap<>();
  private final long[] arrival;
  private final double[] ttftMillis;
  private final double[] e2eMillis;
  private final int[] decodeRankOf;
  private int disaggregated;
  private long transferredBytes;
  private int arrivalsLeft;

  PdLabSimulation(
      Workload workload, PromptKeys keys, LabConfig lab, Cluster cluster, PdScheme scheme) {
    this.workload = workload;
    this.keys = keys;
    this.lab = lab;
    this.cluster = cluster;
    this.scheme = scheme;
    this.prefillRouter = router("prefill", scheme.prefillPolicy());
    this.decodeRouter = router("decode", scheme.decodePolicy());
    this.reportMicros = LabSimulation.reportMicros(lab, Policies.visibility(scheme.decodePolicy()));
    int p = cluster.prefillEngines() * cluster.dpSize();
    int d = cluster.decodeEngines() * cluster.dpSize();
    this.ranks = new LabEngine[p + d];
    this.generation = new int[p + d];
    LabEngine.Listener listener = new Milestones();
    for (int i = 0; i < p + d; i++) {
      boolean prefill = i < p;
      int local = prefill ? i : i - p;
      String engine = (prefill ? "p" : "d") + (local / cluster.dpSize());
      int rank = local % cluster.dpSize();
      ReplicaInfo info =
          new ReplicaInfo(
              engine,
              rank,
              LabConfig.MODEL,
              "sim://" + engine,
              lab.blockSize(),
              List.of(Tier.GPU),
              prefill ? ReplicaInfo.PREFILL : ReplicaInfo.DECODE,
              true,
              true,
              List.of(),
              cluster.dpSize(),
              List.of());
      ranks[i] =
          new LabEngine(
              i,
              info.targetId(),
              lab.blockSize(),
              lab.effectiveCapacity(),
              lab.maxNumSeqs(),
              lab.maxBatchedTokens(),
              0, // no CPU tier in the disaggregated lab
              0,
              listener);
      index.put(info.targetId(), i);
      (prefill ? prefillRouter : decodeRouter).replicaUp(info);
    }
    int count = workload.size();
    this.arrival = new long[count];
    this.ttftMillis = new double[count];
    this.e2eMillis = new double[count];
    this.decodeRankOf = new int[count];
    Arrays.fill(ttftMillis, -1);
  }

  private KvTrackerCore router(String pool, String policy) {
    return LabRouters.router("ingress-" + pool, policy, lab.seed(), 1 << 18);
  }

  /** Replays {@code workload} with {@code scheme} on {@code cluster}. */
  public static Result run(
      Workload workload, PromptKeys keys, LabConfig lab, Cluster cluster, PdScheme scheme) {
    return new PdLabSimulation(workload, keys, lab, cluster, scheme).run();
  }

  Result run() {
    for (int i = 0; i < workload.size(); i++) {
      arrival[i] = workload.get(i).arrivalMicros();
      push(arrival[i], ARRIVAL, 0, i, null);
    }
    arrivalsLeft = workload.size();
    push(0, TICK, 0, 0, null);
    LabEventQueue.Event e;
    while ((e = queue.poll()) != null) {
      switch (e.kind()) {
        case ARRIVAL -> onArrival(e.time(), e.arg());
        case PASS_END -> onPassEnd(e.time(), e.target(), e.arg());
        case TRANSFERRED -> submit(e.time(), e.target(), (LabSequence) e.payload());
        case TICK -> onTick(e.time());
        default -> throw new IllegalStateException("unknown event kind " + e.kind());
      }
    }
    return result();
  }

  private void push(long time, int kind, int target, int arg, Object payload) {
    queue.push(time, kind, target, arg, payload, kind != TICK);
  }

  private int prompt(int i) {
    return Math.max(1, workload.get(i).inputLength());
  }

  private int output(int i) {
    return Math.max(1, workload.get(i).outputLength());
  }

  // ------------------------------------------------------------------ decisions

  private void onArrival(long now, int i) {
    arrivalsLeft--;
    if (!scheme.decodeFirst()) {
      prefill(now, i);
      return;
    }
    Decision d = decide(decodeRouter, "d" + i, i, now);
    int cached = d.ranked().get(0).cachedTokens();
    int rank = rankFor(d);
    decodeRankOf[i] = rank;
    if (skip(prompt(i), cached)) {
      submit(now, rank, sequence(i, "d" + i, output(i), false));
    } else {
      prefill(now, i);
    }
  }

  private boolean skip(int promptTokens, int cachedOnDecode) {
    return promptTokens < scheme.skipPromptsUnderTokens()
        || promptTokens - Math.min(promptTokens, cachedOnDecode) < scheme.skipUncachedUnderTokens();
  }

  private void prefill(long now, int i) {
    disaggregated++;
    Decision p = decide(prefillRouter, "p" + i, i, now);
    submit(now, rankFor(p), sequence(i, "p" + i, 1, false));
  }

  private Decision decide(KvTrackerCore router, String id, int i, long now) {
    Decision d =
        router.selectAndReserve(
            new RouteRequest(id, LabConfig.MODEL, keys.of(i), prompt(i)), now / 1000);
    if (!d.placed()) {
      throw new IllegalStateException("no replica for " + id);
    }
    return d;
  }

  /**
   * The rank that runs a decision: the chosen one, or for a rank-blind router the least loaded rank
   * of the chosen engine.
   */
  private int rankFor(Decision d) {
    int chosen = index.get(d.chosen());
    if (scheme.rankAware() || cluster.dpSize() == 1) {
      return chosen;
    }
    int first = chosen - chosen % cluster.dpSize();
    int best = first;
    int bestScore = Integer.MAX_VALUE;
    for (int r = first; r < first + cluster.dpSize(); r++) {
      int score = 4 * ranks[r].waitingCount() + ranks[r].runningCount();
      if (score < bestScore) {
        best = r;
        bestScore = score;
      }
    }
    return best;
  }

  private LabSequence sequence(int i, String id, int outputTokens, boolean remote) {
    LabSequence s = new LabSequence(i, id, 0, keys.of(i), prompt(i), outputTokens, arrival[i]);
    s.remotePrefill = remote;
    return s;
  }

  private void submit(long now, int rank, LabSequence s) {
    LabEngine engine = ranks[rank];
    engine.submit(s);
    if (engine.busy()) {
      if (engine.interrupt(now)) {
        generation[rank]++;
        push(engine.passEnd(), PASS_END, rank, generation[rank], null);
      }
    } else {
      startPass(now, rank);
    }
  }

  private void startPass(long now, int rank) {
    long end = ranks[rank].startPass(now);
    if (end >= 0) {
      generation[rank]++;
      push(end, PASS_END, rank, generation[rank], null);
    }
  }

  // ------------------------------------------------------------------ engines

  private boolean isPrefill(int rank) {
    return rank < cluster.prefillEngines() * cluster.dpSize();
  }

  private void onPassEnd(long now, int rank, int gen) {
    if (gen != generation[rank]) {
      return;
    }
    LabEngine engine = ranks[rank];
    KvEventBatch batch = engine.completePass();
    if (batch != null) {
      (isPrefill(rank) ? prefillRouter : decodeRouter).apply(batch);
    }
    if (engine.hasWork()) {
      startPass(now, rank);
    }
  }

  /** The prefill of request {@code i} is done at {@code now}: its decode rank pulls the KV. */
  private void handOff(long now, int i) {
    int decode;
    if (scheme.decodeFirst()) {
      decode = decodeRankOf[i];
    } else {
      decode = rankFor(decide(decodeRouter, "d" + i, i, now));
      decodeRankOf[i] = decode;
    }
    long[] k = keys.of(i);
    int full = Math.min(k.length, (prompt(i) - 1) / lab.blockSize());
    int[] scratch = new int[Math.max(1, full)];
    int missing = full - ranks[decode].cache().cachedPrefix(k, full, scratch);
    long bytes = (long) missing * lab.blockSize() * cluster.kvBytesPerToken();
    transferredBytes += bytes;
    long micros = 1_000 + (long) (bytes / cluster.transferBytesPerSecond() * 1e6);
    push(now + micros, TRANSFERRED, decode, i, sequence(i, "d" + i, output(i), true));
  }

  private final class Milestones implements LabEngine.Listener {
    @Override
    public void firstToken(LabEngine engine, LabSequence seq, long timeMicros) {
      if (isPrefill(engine.replica())) {
        return; // the client's first token comes from the decode rank
      }
      ttftMillis[seq.requestIndex] = (timeMicros - seq.arrivalMicros) / 1000.0;
      decodeRouter.prefillCompleted(seq.requestId);
    }

    @Override
    public void finished(LabEngine engine, LabSequence seq, long timeMicros) {
      if (isPrefill(engine.replica())) {
        prefillRouter.released(seq.requestId);
        handOff(timeMicros, seq.requestIndex);
        return;
      }
      e2eMillis[seq.requestIndex] = (timeMicros - seq.arrivalMicros) / 1000.0;
      decodeRouter.released(seq.requestId);
    }
  }

  private void onTick(long now) {
    for (int r = 0; r < ranks.length; r++) {
      ReplicaLoad load = LabRouters.load(ranks[r], now);
      (isPrefill(r) ? prefillRouter : decodeRouter).loadReported(load);
    }
    prefillRouter.expire(now / 1000);
    decodeRouter.expire(now / 1000);
    if (arrivalsLeft > 0 || queue.workPending()) {
      push(now + reportMicros, TICK, 0, 0, null);
    }
  }

  // ------------------------------------------------------------------ result

  private Result result() {
    int p = cluster.prefillEngines() * cluster.dpSize();
    long pq = 0;
    long ph = 0;
    long dq = 0;
    long dh = 0;
    double max = 0;
    double sum = 0;
    for (int r = 0; r < ranks.length; r++) {
      if (r < p) {
        pq += ranks[r].prefixQueries();
        ph += ranks[r].prefixHits();
      } else {
        dq += ranks[r].prefixQueries();
        dh += ranks[r].prefixHits();
        double work = ranks[r].prefixQueries();
        max = Math.max(max, work);
        sum += work;
      }
    }
    int n = workload.size();
    double[] ttft = Arrays.stream(ttftMillis).filter(v -> v >= 0).toArray();
    List<Double> tpot = new ArrayList<>();
    List<Double> e2e = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      if (ttftMillis[i] >= 0 && e2eMillis[i] > 0) {
        e2e.add(e2eMillis[i]);
        if (output(i) > 1) {
          tpot.add((e2eMillis[i] - ttftMillis[i]) / (output(i) - 1));
        }
      }
    }
    double mean = sum / Math.max(1, ranks.length - p);
    return new Result(
        scheme.name(),
        n,
        e2e.size(),
        n == 0 ? 0 : (double) disaggregated / n,
        Latency.of(ttft),
        Latency.of(tpot.stream().mapToDouble(Double::doubleValue).toArray()),
        Latency.of(e2e.stream().mapToDouble(Double::doubleValue).toArray()),
        pq == 0 ? 0 : (double) ph / pq,
        dq == 0 ? 0 : (double) dh / dq,
        transferredBytes / 1e9,
        mean == 0 ? 1 : max / mean);
  }
}

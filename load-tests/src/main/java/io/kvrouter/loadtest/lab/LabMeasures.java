package io.kvrouter.loadtest.lab;

import io.kvrouter.loadtest.workload.BlockHitCounter;
import io.kvrouter.loadtest.workload.Workload;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What one {@link LabSimulation} run measures, apart from how it drives the run: per request its
 * arrival, time to first token and end-to-end latency; decisions per replica (and those that went
 * to a killed replica); completions; and a series of per-replica uncached prefill rates sampled
 * about 200 times over the workload's span (at most once a second); and, for a trace, a {@link
 * BlockHitCounter} fed each request's first placement, which counts {@code block_hit_rate} over
 * trace blocks, holding at most {@code capacityBlocks × blockSize ÷ traceBlockTokens} trace blocks
 * per replica (LRU) when the engines' capacity is limited. {@link #result} turns them, with the
 * engines' own counters, into a {@link PolicyResult}.
 *
 * <p>Cost: three numbers per request, one row of replicas per sample. Single-threaded.
 */
final class LabMeasures {

  final long[] arrival;
  private final double[] ttftMillis;
  private final double[] e2eMillis;
  private final long[] perReplicaDecisions;
  private long decisions;
  private long decisionsToKilled;
  private long completed;
  private long lastFinish;
  private final List<double[]> loadSeries = new ArrayList<>();
  private final List<Double> loadSeconds = new ArrayList<>();
  private final long[] lastPrefill;
  private long lastSampleMicros;
  private final long sampleMicros;

  /** Follow-up and tracker measures ({@link SessionMeasures}). */
  final SessionMeasures.Recorder sessions;

  /** Counts trace-block hits; null when the workload has no trace blocks. */
  private final BlockHitCounter blockHits;

  /**
   * @param workload the workload (its size, span and trace blocks)
   * @param config the lab (its replicas and their capacity)
   */
  LabMeasures(Workload workload, LabConfig config) {
    int requests = workload.size();
    int replicas = config.replicas();
    long spanMicros = workload.durationMicros();
    long cap =
        config.capacityBlocks() == 0
            ? 0
            : Math.max(
                1,
                config.capacityBlocks() * config.blockSize() / Math.max(1, workload.blockTokens()));
    this.blockHits =
        workload.blockTokens() > 0
            ? new BlockHitCounter(workload, replicas, (int) Math.min(Integer.MAX_VALUE, cap))
            : null;
    this.sessions = new SessionMeasures.Recorder(workload);
    this.arrival = new long[requests];
    this.ttftMillis = new double[requests];
    this.e2eMillis = new double[requests];
    Arrays.fill(ttftMillis, -1);
    this.perReplicaDecisions = new long[replicas];
    this.lastPrefill = new long[replicas];
    long span = requests == 0 ? 1 : Math.max(1, spanMicros);
    this.sampleMicros = Math.max(1_000_000, span / 200);
  }

  /**
   * Request {@code index} reached {@code replica} for the first time (not a retry after a kill).
   */
  void placedFirst(int index, int replica) {
    sessions.placed(index, replica);
    if (blockHits != null) {
      blockHits.record(index, replica);
    }
  }

  /** A router placed a request on {@code replica} ({@code dead}: one already killed). */
  void decided(int replica, boolean dead) {
    decisions++;
    perReplicaDecisions[replica]++;
    if (dead) {
      decisionsToKilled++;
    }
  }

  /** A request's first token (its first one only counts: a re-decided request keeps its own). */
  void firstToken(int index, long arrivalMicros, long timeMicros) {
    if (ttftMillis[index] < 0) {
      ttftMillis[index] = (timeMicros - arrivalMicros) / 1000.0;
    }
  }

  /** A request finished. */
  void finished(int index, long arrivalMicros, long timeMicros) {
    e2eMillis[index] = (timeMicros - arrivalMicros) / 1000.0;
    completed++;
    lastFinish = Math.max(lastFinish, timeMicros);
  }

  /** True when a load sample is due at {@code now}. */
  boolean sampleDue(long now) {
    return now - lastSampleMicros >= sampleMicros;
  }

  /** Samples the engines' uncached prefill rates since the last sample. */
  void sampleLoad(long now, LabEngine[] engines) {
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

  PolicyResult result(String policy, LabEngine[] engines, long wallMillis, long cpuMillis) {
    long queries = 0;
    long hits = 0;
    long cpuHits = 0;
    long adapterLoads = 0;
    long[] prefill = new long[engines.length];
    double sum = 0;
    double max = 0;
    for (int i = 0; i < engines.length; i++) {
      queries += engines[i].prefixQueries();
      hits += engines[i].prefixHits();
      cpuHits += engines[i].cpuHits();
      adapterLoads += engines[i].adapterLoads();
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
        queries == 0 ? 0 : (double) cpuHits / queries,
        adapterLoads,
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
        cpuMillis,
        sessions.result(perReplicaDecisions),
        null);
  }
}

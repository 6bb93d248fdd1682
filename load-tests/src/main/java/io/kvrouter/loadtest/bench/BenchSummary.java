package io.kvrouter.loadtest.bench;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.HdrHistogram.Histogram;

/**
 * The figures of one run, as written to {@code results.json} (Jackson serializes the records field
 * by field) and rendered in {@code report.md}.
 *
 * <p>Latencies are recorded in HdrHistograms (microsecond resolution, three significant digits).
 * TTFT and end-to-end come twice: {@code corrected} from the intended send time (the open-loop
 * correction for coordinated omission), {@code uncorrected} from the actual send. Inter-token
 * latency is the gap between consecutive content chunks of OK requests; the same in both views.
 * Only OK requests contribute latencies.
 *
 * <p>Cost of {@link #of}: O(requests + chunks), three to six histograms of a few tens of KB.
 *
 * @param tool always {@code kvrouter bench}
 * @param label a name for comparisons, e.g. {@code kv-aware} or {@code round-robin} ({@code ""} if
 *     none)
 * @param commandLine the command that produced the run, as typed ({@code ""} if not from the CLI)
 * @param startedAt ISO-8601 start time
 * @param workload the request source's name
 * @param stoppedEarly whether the run was stopped before its end (Ctrl-C)
 * @param config the configuration (without the API key)
 * @param counts requests by outcome
 * @param durationSeconds start to last end
 * @param throughput completed work per second
 * @param latencyMs latency percentiles in milliseconds
 * @param tokens token totals from the usage chunks
 * @param engines engine-side hit rate from the metrics scrapes
 * @param targets per-target counts
 * @param errorSamples up to ten distinct error messages
 */
public record BenchSummary(
    String tool,
    String label,
    String commandLine,
    String startedAt,
    String workload,
    boolean stoppedEarly,
    ConfigView config,
    Counts counts,
    double durationSeconds,
    Throughput throughput,
    Latencies latencyMs,
    Tokens tokens,
    Engines engines,
    List<TargetCounts> targets,
    List<String> errorSamples) {

  /** The configuration as reported. */
  public record ConfigView(
      List<String> targets,
      String targetPolicy,
      String model,
      String endpoint,
      int maxRequests,
      double maxDurationSeconds,
      int concurrencyCap,
      double timeoutSeconds,
      boolean ignoreEos,
      boolean apiKeySet,
      List<String> engineMetrics) {}

  /**
   * Requests by outcome. {@code errors} = httpErrors + streamErrors + sendErrors; {@code total} =
   * ok + errors + timeouts + dropped + cancelled = requests taken from the source.
   */
  public record Counts(
      int total,
      int sent,
      int ok,
      int errors,
      int httpErrors,
      int streamErrors,
      int sendErrors,
      int timeouts,
      int dropped,
      int cancelled) {}

  /** OK requests, output tokens and prompt tokens per second of run time. */
  public record Throughput(
      double requestsPerSecond, double outputTokensPerSecond, double promptTokensPerSecond) {}

  /** A latency with and without the coordinated-omission correction. */
  public record Corrected(LatencySummary corrected, LatencySummary uncorrected) {}

  /** All latency figures; {@code sendLag} is how late requests left the client. */
  public record Latencies(
      Corrected ttft, Corrected e2e, LatencySummary itl, LatencySummary sendLag) {}

  /**
   * Token totals over OK requests from their usage chunks; {@code cachedRatio} = cached / prompt
   * over the requests that reported cached tokens ({@code null} if none did): the client-side view
   * of the engine's prefix cache.
   */
  public record Tokens(
      long prompt,
      long completion,
      long cached,
      int requestsWithUsage,
      int requestsWithCached,
      Double cachedRatio) {}

  /**
   * Engine-side prefix-cache figures: {@code hitRate} = ΣΔhits / ΣΔqueries over the engines whose
   * deltas are known ({@code null} if none or no queries).
   */
  public record Engines(
      Double hitRate, Double deltaQueries, Double deltaHits, List<EngineDelta> perEngine) {}

  /** How many requests went to one target and how they ended. */
  public record TargetCounts(String url, int sent, int ok, int errors, int timeouts) {}

  /**
   * Computes the figures of {@code run} without a label; {@code commandLine} is recorded as given.
   */
  public static BenchSummary of(BenchRun run, String commandLine) {
    return of(run, commandLine, "");
  }

  /**
   * Computes the figures of {@code run}; {@code commandLine} and {@code label} are recorded as
   * given.
   */
  public static BenchSummary of(BenchRun run, String commandLine, String label) {
    BenchConfig c = run.config();
    Histogram ttftC = LatencySummary.newHistogram();
    Histogram ttftU = LatencySummary.newHistogram();
    Histogram e2eC = LatencySummary.newHistogram();
    Histogram e2eU = LatencySummary.newHistogram();
    Histogram itl = LatencySummary.newHistogram();
    Histogram lag = LatencySummary.newHistogram();
    int ok = 0, http = 0, stream = 0, send = 0, timeouts = 0, dropped = 0, cancelled = 0, sent = 0;
    long prompt = 0, completion = 0, cached = 0, promptOfCached = 0;
    int withUsage = 0, withCached = 0;
    int[][] perTarget = new int[c.targets().size()][4];
    Set<String> errors = new LinkedHashSet<>();
    for (RequestOutcome o : run.outcomes()) {
      if (o.target() >= 0) {
        sent++;
        perTarget[o.target()][0]++;
        LatencySummary.record(lag, o.sendLagNanos());
      }
      switch (o.status()) {
        case OK -> ok++;
        case HTTP_ERROR -> http++;
        case STREAM_ERROR -> stream++;
        case SEND_ERROR -> send++;
        case TIMEOUT -> timeouts++;
        case DROPPED -> dropped++;
        case CANCELLED -> cancelled++;
        default -> throw new IllegalStateException("unknown status " + o.status());
      }
      if (o.target() >= 0) {
        int column =
            o.status() == RequestOutcome.Status.OK
                ? 1
                : o.status() == RequestOutcome.Status.TIMEOUT
                    ? 3
                    : o.status() == RequestOutcome.Status.CANCELLED ? -1 : 2;
        if (column > 0) {
          perTarget[o.target()][column]++;
        }
      }
      if (o.status() != RequestOutcome.Status.OK) {
        if (o.error() != null && errors.size() < 10) {
          errors.add(o.status() + ": " + o.error());
        }
        continue;
      }
      if (o.hasFirstChunk()) {
        LatencySummary.record(ttftC, o.ttftCorrectedNanos());
        LatencySummary.record(ttftU, o.ttftUncorrectedNanos());
      }
      LatencySummary.record(e2eC, o.e2eCorrectedNanos());
      LatencySummary.record(e2eU, o.e2eUncorrectedNanos());
      for (int g = 0; g < o.gapCount(); g++) {
        LatencySummary.record(itl, o.gapNanos(g));
      }
      completion += o.completionTokens() >= 0 ? o.completionTokens() : o.chunkNanos().length;
      if (o.promptTokens() >= 0) {
        withUsage++;
        prompt += o.promptTokens();
        if (o.cachedTokens() >= 0) {
          withCached++;
          cached += o.cachedTokens();
          promptOfCached += o.promptTokens();
        }
      }
    }
    double seconds = run.durationNanos() / 1e9;
    Throughput throughput =
        seconds <= 0
            ? new Throughput(0, 0, 0)
            : new Throughput(
                round(ok / seconds), round(completion / seconds), round(prompt / seconds));
    List<TargetCounts> targets = new ArrayList<>();
    for (int t = 0; t < perTarget.length; t++) {
      targets.add(
          new TargetCounts(
              c.targets().get(t).toString(),
              perTarget[t][0],
              perTarget[t][1],
              perTarget[t][2],
              perTarget[t][3]));
    }
    ConfigView view =
        new ConfigView(
            c.targets().stream().map(Object::toString).toList(),
            c.targetPolicy().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'),
            run.model(),
            c.endpoint().name().toLowerCase(java.util.Locale.ROOT),
            c.maxRequests(),
            c.maxDuration().toMillis() / 1000.0,
            c.concurrencyCap(),
            c.requestTimeout().toMillis() / 1000.0,
            c.ignoreEos(),
            c.apiKey() != null,
            c.engineMetrics().stream().map(Object::toString).toList());
    return new BenchSummary(
        "kvrouter bench",
        label == null ? "" : label,
        commandLine == null ? "" : commandLine,
        run.startedAt().toString(),
        run.workload(),
        run.stoppedEarly(),
        view,
        new Counts(
            run.outcomes().size(),
            sent,
            ok,
            http + stream + send,
            http,
            stream,
            send,
            timeouts,
            dropped,
            cancelled),
        round(seconds),
        throughput,
        new Latencies(
            new Corrected(LatencySummary.of(ttftC), LatencySummary.of(ttftU)),
            new Corrected(LatencySummary.of(e2eC), LatencySummary.of(e2eU)),
            LatencySummary.of(itl),
            LatencySummary.of(lag)),
        new Tokens(
            prompt,
            completion,
            cached,
            withUsage,
            withCached,
            promptOfCached > 0 ? round((double) cached / promptOfCached) : null),
        engines(EngineDelta.between(run.enginesBefore(), run.enginesAfter())),
        List.copyOf(targets),
        List.copyOf(errors));
  }

  private static Engines engines(List<EngineDelta> deltas) {
    double q = 0, h = 0;
    boolean any = false;
    for (EngineDelta d : deltas) {
      if (d.deltaQueries() != null && d.deltaHits() != null) {
        any = true;
        q += d.deltaQueries();
        h += d.deltaHits();
      }
    }
    return new Engines(any && q > 0 ? round(h / q) : null, any ? q : null, any ? h : null, deltas);
  }

  private static double round(double v) {
    return Math.round(v * 10_000) / 10_000.0;
  }
}

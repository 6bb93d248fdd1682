package io.kvrouter.cli.dev;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvrouter.loadtest.bench.BenchConfig;
import io.kvrouter.loadtest.bench.BenchEndpoint;
import io.kvrouter.loadtest.bench.BenchRequestSource;
import io.kvrouter.loadtest.bench.BenchRun;
import io.kvrouter.loadtest.bench.BenchRunner;
import io.kvrouter.loadtest.bench.BenchSummary;
import io.kvrouter.loadtest.bench.ComparisonReport;
import io.kvrouter.loadtest.bench.MarkdownReport;
import io.kvrouter.loadtest.bench.ProgressReporter;
import io.kvrouter.loadtest.bench.ResultsWriter;
import io.kvrouter.loadtest.bench.TargetPolicy;
import io.kvrouter.loadtest.bench.TtftChart;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code kvrouter bench}: builds a workload and a {@link BenchConfig} from the flags, runs {@link
 * BenchRunner} with a progress display on stderr, prints the report and writes {@code results.json}
 * and {@code report.md} to {@code --out}.
 */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    subcommands = PickerBenchCommand.class,
    description =
        "Open-loop HTTP load generator for any OpenAI-compatible endpoint; reports TTFT, ITL, end-to-end latency and engine hit rate.")
final class BenchCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(
      names = "--url",
      split = ",",
      paramLabel = "URL",
      description =
          "Target base URL(s), comma-separated; requests go round robin (several ingresses, or"
              + " plain engines). Required.")
  List<URI> urls;

  @Option(
      names = "--target-policy",
      defaultValue = "round-robin",
      converter = PolicyConverter.class,
      description =
          "round-robin, or group-affinity (every request of a prefix group or session to one target: "
              + "the client-side reference when the targets are engines) (default: ${DEFAULT-VALUE}).")
  TargetPolicy targetPolicy;

  @Option(names = "--model", description = "Model name (default: the first id of GET /v1/models).")
  String model;

  @Option(
      names = "--endpoint",
      defaultValue = "completions",
      description = "completions or chat (default: ${DEFAULT-VALUE}).")
  BenchEndpoint endpoint;

  /** What to send, and when. */
  @Mixin BenchWorkloadOptions workload;

  @Option(
      names = "--duration",
      defaultValue = "600",
      description = "Stop issuing requests after this many seconds (default: ${DEFAULT-VALUE}).")
  double duration;

  @Option(
      names = "--concurrency-cap",
      defaultValue = "1024",
      description =
          "Requests in flight at most; a request due beyond the cap is dropped and counted (default: ${DEFAULT-VALUE}).")
  int concurrencyCap;

  @Option(
      names = "--ignore-eos",
      description = "Send vLLM's ignore_eos so each request generates max_tokens tokens.")
  boolean ignoreEos;

  @Option(
      names = "--engine-metrics",
      split = ",",
      paramLabel = "URL",
      description =
          "Engines' Prometheus URL(s), scraped before and after for the engine-side prefix-cache hit rate.")
  List<URI> engineMetrics = new ArrayList<>();

  @Option(
      names = "--out",
      defaultValue = "bench-results",
      description =
          "Directory for results.json, report.md, requests.csv and ttft_over_time.png (default: ${DEFAULT-VALUE}).")
  Path out;

  @Option(
      names = "--label",
      defaultValue = "",
      description = "A name for this run in reports and comparisons, e.g. kv-aware or round-robin.")
  String label;

  @Option(
      names = "--compare-to",
      split = ",",
      paramLabel = "DIR",
      description =
          "Earlier runs' output directories (or results.json files): also write comparison.md with them and this run side by side.")
  List<Path> compareTo = new ArrayList<>();

  @Option(
      names = "--timeout",
      defaultValue = "120",
      description =
          "Per-request timeout in seconds, connect to [DONE] (default: ${DEFAULT-VALUE}).")
  double timeout;

  @Option(
      names = "--warmup",
      defaultValue = "1",
      description =
          "Unmeasured requests per target before the run; the run aborts if one fails (default: ${DEFAULT-VALUE}).")
  int warmup;

  @Option(
      names = "--follow-ready",
      paramLabel = "MS",
      defaultValue = "0",
      description =
          "Poll every target's GET /ready every MS milliseconds and send only to ready ones, as a"
              + " load balancer does (rolling restarts); a request whose connection is refused goes"
              + " to the next ready target; 0 = off (default: ${DEFAULT-VALUE}).")
  long followReadyMillis;

  @Option(
      names = "--api-key",
      description = "Sent as 'Authorization: Bearer <key>'; never written to the results.")
  String apiKey;

  @Override
  public Integer call() throws Exception {
    // Checked here, not with required = true: picocli would ask it of 'bench picker' too.
    if (urls == null || urls.isEmpty()) {
      throw new ParameterException(spec.commandLine(), "Missing required option: '--url=URL'");
    }
    for (Path p : compareTo) {
      if (!java.nio.file.Files.exists(p.resolve(ResultsWriter.RESULTS_JSON))
          && !java.nio.file.Files.isRegularFile(p)) {
        throw new ParameterException(
            spec.commandLine(), "--compare-to " + p + ": no results.json there");
      }
    }
    if (workload.requests != null && workload.requests < 0
        || workload.maxTokens < 1
        || warmup < 0) {
      throw new ParameterException(
          spec.commandLine(), "--requests and --warmup must be >= 0, --max-tokens >= 1");
    }
    BenchRequestSource source = workload.source(spec, endpoint);
    int cap = workload.requests != null ? workload.requests : -1;
    BenchConfig config;
    try {
      config =
          new BenchConfig(
              urls,
              model,
              endpoint,
              cap,
              seconds(duration, "--duration"),
              concurrencyCap,
              seconds(timeout, "--timeout"),
              apiKey,
              ignoreEos,
              engineMetrics,
              targetPolicy,
              warmup);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
    int expected =
        source.sizeHint() < 0
            ? cap
            : cap < 0 ? source.sizeHint() : Math.min(cap, source.sizeHint());

    BenchRunner runner = new BenchRunner(config);
    if (followReadyMillis > 0) {
      runner.followReadiness(java.time.Duration.ofMillis(followReadyMillis));
    }
    // Ctrl-C: stop issuing, cancel what is in flight, and let this thread write what finished.
    CountDownLatch written = new CountDownLatch(1);
    Thread stopHook =
        new Thread(
            () -> {
              runner.stop();
              try {
                written.await(30, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            "bench-stop");
    Runtime.getRuntime().addShutdownHook(stopHook);
    try {
      BenchRun run;
      try (ProgressReporter progress =
          new ProgressReporter(
              runner.counters(), expected, System.err, System.console() != null, 5)) {
        run = runner.run(source);
      } catch (IllegalStateException e) {
        System.err.println("kvrouter bench: " + e.getMessage());
        return 1;
      }
      BenchSummary summary = BenchSummary.of(run, commandLine(), label);
      ResultsWriter.write(out, summary, run);
      System.out.print(MarkdownReport.render(summary));
      System.out.println();
      System.out.println(
          "Wrote "
              + out.resolve(ResultsWriter.RESULTS_JSON)
              + ", "
              + out.resolve(ResultsWriter.REPORT_MD)
              + ", "
              + out.resolve(ResultsWriter.REQUESTS_CSV)
              + " and "
              + out.resolve(TtftChart.FILE));
      if (!compareTo.isEmpty()) {
        List<JsonNode> runs = new ArrayList<>(ComparisonReport.read(compareTo));
        runs.add(ComparisonReport.tree(summary));
        String comparison = ComparisonReport.render(runs);
        ResultsWriter.writeComparison(out, comparison);
        System.out.println();
        System.out.print(comparison);
        System.out.println("Wrote " + out.resolve(ResultsWriter.COMPARISON_MD));
      }
      return summary.counts().ok() > 0 ? 0 : 1;
    } finally {
      written.countDown();
      try {
        Runtime.getRuntime().removeShutdownHook(stopHook);
      } catch (IllegalStateException shuttingDown) {
        // the hook is running: it returns once the latch above is down
      }
    }
  }

  private Duration seconds(double s, String flag) {
    return BenchWorkloadOptions.seconds(spec, s, flag);
  }

  /** The command as typed, the API key masked, for the report. */
  private String commandLine() {
    List<String> args =
        spec.commandLine().getParseResult().originalArgs(); // from the top command on
    StringBuilder sb = new StringBuilder(args.contains("bench") ? "kvrouter" : "kvrouter bench");
    boolean maskNext = false;
    for (String a : args) {
      String shown = a;
      if (maskNext) {
        shown = "***";
        maskNext = false;
      } else if (a.equals("--api-key")) {
        maskNext = true;
      } else if (a.startsWith("--api-key=")) {
        shown = "--api-key=***";
      }
      sb.append(' ')
          .append(
              shown.matches("[A-Za-z0-9_@%+=:,./-]+")
                  ? shown
                  : "'" + shown.replace("'", "'\\''") + "'");
    }
    return sb.toString();
  }

  /** Accepts {@code group-affinity} as well as {@code GROUP_AFFINITY}. */
  static final class PolicyConverter implements picocli.CommandLine.ITypeConverter<TargetPolicy> {
    @Override
    public TargetPolicy convert(String value) {
      return TargetPolicy.valueOf(
          value.trim().toUpperCase(java.util.Locale.ROOT).replace('-', '_'));
    }
  }
}

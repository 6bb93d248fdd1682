package io.kvrouter.loadtest.bench;

import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * What one endpoint-picker decision costs under load: plays Envoy against a kvrouter ingress's
 * ext_proc server ({@link EnvoyExchange}, one gRPC stream per request over one HTTP/2 connection,
 * as an Envoy worker does), at a fixed open-loop rate (request {@code k} of a round is sent at
 * {@code k / rate} seconds whether or not earlier ones are answered), with chat bodies of a given
 * size from {@link PickerWorkload}. Unmeasured warm-up rounds come first, for the picker's JIT:
 * with a pid, until its compiler threads take under {@value #JIT_SETTLED_MS} ms of CPU per decision
 * (at most {@code warmupRounds}), else one; then the measured rounds.
 *
 * <p>Per round: decision time percentiles (headers sent to the destination's reply), errors by kind
 * (immediate responses, stream errors, no answer within the timeout), and, when the picker's pid is
 * given, its process CPU time over the round divided by the decisions sent, also without its JIT
 * compiler threads, with the largest thread groups. The client's own lateness (how far behind its
 * schedule it sent) is reported so a saturated client is not mistaken for a slow picker.
 */
public final class PickerBench {

  /** JIT compiler CPU per decision under which the picker counts as warm, ms. */
  static final double JIT_SETTLED_MS = 0.05;

  /**
   * One run's settings.
   *
   * @param host the picker's ext_proc host
   * @param port the picker's ext_proc port
   * @param pid the picker's process id for CPU figures, or 0 for none (Linux only)
   * @param rate decisions per second, open loop
   * @param decisions decisions per measured round
   * @param warmup decisions of each unmeasured warm-up round (0 = none)
   * @param warmupRounds most warm-up rounds
   * @param rounds measured rounds
   * @param workload what the requests carry
   * @param chunkBytes largest request body chunk, as Envoy forwards the body in pieces
   * @param timeout how long a stream may take before it is cancelled and counted as an error
   */
  public record Settings(
      String host,
      int port,
      long pid,
      double rate,
      int decisions,
      int warmup,
      int warmupRounds,
      int rounds,
      WorkloadShape workload,
      int chunkBytes,
      Duration timeout) {

    public Settings {
      if (!(rate > 0)
          || decisions < 1
          || warmup < 0
          || warmupRounds < 1
          || rounds < 1
          || chunkBytes < 1) {
        throw new IllegalArgumentException(
            "need rate > 0, decisions >= 1, warmup >= 0, warmup rounds >= 1, rounds >= 1,"
                + " chunk bytes >= 1");
      }
    }
  }

  /**
   * The requests' shape.
   *
   * @param model model name in the bodies
   * @param tokens prompt tokens per request (o200k)
   * @param groups shared-prefix groups
   * @param prefixShare share of each prompt that its group shares
   * @param seed seed of the texts
   */
  public record WorkloadShape(
      String model, int tokens, int groups, double prefixShare, long seed) {}

  /**
   * One round's figures.
   *
   * @param cpuMsPerDecision picker CPU per decision sent, NaN without a pid
   * @param cpuMsWithoutJit the same without the JIT compiler threads' share
   * @param threadMs picker CPU per decision by thread group, largest first
   * @param loadAverage the machine's 1-minute load average at the end of the round
   */
  public record Round(
      String label,
      int sent,
      int ok,
      Map<String, Integer> errors,
      double p50Ms,
      double p99Ms,
      double maxMs,
      double lateP99Ms,
      double cpuMsPerDecision,
      double cpuMsWithoutJit,
      Map<String, Double> threadMs,
      double loadAverage) {}

  private final Settings settings;
  private final PickerWorkload workload;
  private final ProcessCpu cpu;
  private long nextRequest;

  private PickerBench(Settings settings) {
    this.settings = settings;
    WorkloadShape w = settings.workload();
    this.workload =
        new PickerWorkload(w.model(), w.tokens(), w.groups(), w.prefixShare(), w.seed());
    this.cpu = settings.pid() > 0 ? new ProcessCpu(settings.pid()) : null;
  }

  /**
   * Runs the warm-up and the measured rounds; prints a line per round to {@code log}; returns the
   * measured rounds.
   */
  public static List<Round> run(Settings settings, PrintStream log)
      throws IOException, InterruptedException {
    PickerBench bench = new PickerBench(settings);
    log.printf(
        "picker bench: %d prompt tokens per request (ChatML, o200k; first request), %.0f/s%n",
        bench.workload.promptTokens(0), settings.rate());
    ManagedChannel channel =
        NettyChannelBuilder.forAddress(settings.host(), settings.port())
            .usePlaintext()
            .directExecutor()
            .maxInboundMessageSize(64 << 20)
            .build();
    try {
      ExternalProcessorGrpc.ExternalProcessorStub stub = ExternalProcessorGrpc.newStub(channel);
      for (int w = 1; settings.warmup() > 0 && w <= settings.warmupRounds(); w++) {
        Round warmup = bench.round(stub, "warm-up " + w, settings.warmup());
        log.println(line(warmup));
        if (Double.isNaN(warmup.cpuMsPerDecision())
            || warmup.cpuMsPerDecision() - warmup.cpuMsWithoutJit() < JIT_SETTLED_MS) {
          break;
        }
      }
      List<Round> rounds = new ArrayList<>();
      for (int r = 1; r <= settings.rounds(); r++) {
        Round round = bench.round(stub, "round " + r, settings.decisions());
        log.println(line(round));
        rounds.add(round);
      }
      return rounds;
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private Round round(ExternalProcessorGrpc.ExternalProcessorStub stub, String label, int n)
      throws IOException, InterruptedException {
    Map<String, ProcessCpu.ThreadTime> threadsBefore = cpu == null ? Map.of() : cpu.threads();
    double cpuBefore = cpu == null ? 0 : cpu.totalSeconds();
    Histogram late = new Histogram(3);
    List<EnvoyExchange> exchanges = new ArrayList<>(n);
    double intervalNanos = 1e9 / settings.rate();
    long start = System.nanoTime();
    for (int k = 0; k < n; k++) {
      byte[] body = workload.body(nextRequest++);
      long due = start + (long) (k * intervalNanos);
      long wait;
      while ((wait = due - System.nanoTime()) > 0) {
        LockSupport.parkNanos(wait);
      }
      late.recordValue(Math.max(0, System.nanoTime() - due) / 1000);
      exchanges.add(EnvoyExchange.start(stub, "/v1/chat/completions", body, settings.chunkBytes()));
    }
    Histogram decisions = new Histogram(3);
    Map<String, Integer> errors = new TreeMap<>();
    long deadline = System.nanoTime() + settings.timeout().toNanos();
    int ok = 0;
    for (EnvoyExchange exchange : exchanges) {
      EnvoyExchange.Outcome outcome;
      try {
        outcome =
            exchange.result().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        exchange.cancel();
        outcome = new EnvoyExchange.Outcome(null, 0, "no answer in " + settings.timeout());
      } catch (ExecutionException e) {
        outcome = new EnvoyExchange.Outcome(null, 0, "failed: " + e.getCause());
      }
      if (outcome.ok()) {
        ok++;
        decisions.recordValue(outcome.decisionNanos() / 1000);
      } else {
        errors.merge(outcome.error(), 1, Integer::sum);
      }
    }
    double cpuMs = Double.NaN;
    double withoutJit = Double.NaN;
    Map<String, Double> threads = new LinkedHashMap<>();
    if (cpu != null) {
      double total = cpu.totalSeconds() - cpuBefore;
      double jit = 0;
      for (Map.Entry<String, Double> e :
          ProcessCpu.groupDeltas(threadsBefore, cpu.threads()).entrySet()) {
        if (e.getKey().contains("CompilerThre")) {
          jit += e.getValue();
        }
        threads.put(e.getKey(), e.getValue() * 1000 / n);
      }
      cpuMs = total * 1000 / n;
      withoutJit = (total - jit) * 1000 / n;
    }
    return new Round(
        label,
        n,
        ok,
        errors,
        decisions.getValueAtPercentile(50) / 1000.0,
        decisions.getValueAtPercentile(99) / 1000.0,
        decisions.getMaxValue() / 1000.0,
        late.getValueAtPercentile(99) / 1000.0,
        cpuMs,
        withoutJit,
        threads,
        loadAverage());
  }

  /** One round as a line of text, with the five largest thread groups. */
  static String line(Round r) {
    StringBuilder sb =
        new StringBuilder(
            String.format(
                "%s: %d sent, %d ok, errors %s; decision p50 %.2f ms, p99 %.2f ms, max %.2f ms;"
                    + " client late p99 %.2f ms; picker CPU %.3f ms/decision (%.3f without JIT);"
                    + " load %.2f",
                r.label(),
                r.sent(),
                r.ok(),
                r.errors(),
                r.p50Ms(),
                r.p99Ms(),
                r.maxMs(),
                r.lateP99Ms(),
                r.cpuMsPerDecision(),
                r.cpuMsWithoutJit(),
                r.loadAverage()));
    r.threadMs().entrySet().stream()
        .limit(5)
        .forEach(e -> sb.append(String.format("%n    %7.3f ms  %s", e.getValue(), e.getKey())));
    return sb.toString();
  }

  /** The header of {@link #markdownRow}'s table. */
  public static String markdownHeader() {
    return "| case | round | sent / ok | errors | decision p50 ms | p99 ms | max ms"
        + " | picker CPU ms/decision | without JIT | load (1 min) |\n"
        + "|---|---|---:|---|---:|---:|---:|---:|---:|---:|";
  }

  /** One round as a Markdown table row under {@code caseLabel}. */
  public static String markdownRow(String caseLabel, Round r) {
    return String.format(
        "| %s | %s | %d / %d | %s | %.2f | %.2f | %.2f | %.3f | %.3f | %.1f |",
        caseLabel,
        r.label(),
        r.sent(),
        r.ok(),
        r.errors().isEmpty() ? "0" : r.errors().toString(),
        r.p50Ms(),
        r.p99Ms(),
        r.maxMs(),
        r.cpuMsPerDecision(),
        r.cpuMsWithoutJit(),
        r.loadAverage());
  }

  private static double loadAverage() {
    try {
      return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
    } catch (IOException | RuntimeException e) {
      return Double.NaN;
    }
  }
}

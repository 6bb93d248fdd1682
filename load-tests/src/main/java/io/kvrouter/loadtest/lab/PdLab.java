package io.kvrouter.loadtest.lab;

import io.kvrouter.loadtest.workload.Workload;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Runs the disaggregated lab: one {@link PdLabSimulation} per {@link PdScheme} on the same
 * workload, prompts' keys computed once, schemes in parallel on a small pool, and a Markdown table
 * of TTFT, TPOT and hit rate per pool. Each call is independent; thread-safe.
 */
public final class PdLab {

  private PdLab() {}

  /** Replays {@code workload} for each of {@code schemes}, in their order. */
  public static List<PdLabSimulation.Result> run(
      Workload workload,
      LabConfig lab,
      PdLabSimulation.Cluster cluster,
      List<PdScheme> schemes,
      int threads) {
    PromptKeys keys = PromptKeys.compute(workload, LabConfig.MODEL, lab.blockSize());
    ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, threads));
    try {
      List<Future<PdLabSimulation.Result>> futures = new ArrayList<>();
      for (PdScheme s : schemes) {
        futures.add(pool.submit(() -> PdLabSimulation.run(workload, keys, lab, cluster, s)));
      }
      List<PdLabSimulation.Result> out = new ArrayList<>();
      for (Future<PdLabSimulation.Result> f : futures) {
        out.add(f.get());
      }
      return out;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException("a scheme's simulation failed: " + e.getCause(), e);
    } finally {
      pool.shutdownNow();
    }
  }

  /** The results as a Markdown table, with the run's shape above it. */
  public static String markdown(
      String workload,
      PdLabSimulation.Cluster cluster,
      List<PdLabSimulation.Result> results,
      String command) {
    StringBuilder sb = new StringBuilder();
    sb.append("# Disaggregated serving lab: ").append(workload).append("\n\n");
    sb.append(
        String.format(
            Locale.ROOT,
            "%d prefill and %d decode engines, %d data-parallel rank(s) each; KV transfer %d bytes"
                + " per token at %.1f GB/s.%n%n",
            cluster.prefillEngines(),
            cluster.decodeEngines(),
            cluster.dpSize(),
            cluster.kvBytesPerToken(),
            cluster.transferBytesPerSecond() / 1e9));
    sb.append("```\n").append(command).append("\n```\n\n");
    sb.append(
        "| scheme | prefill hop | TTFT p50 / p90 / p99 ms | TPOT p50 / p90 ms | hit rate prefill"
            + " pool | hit rate decode pool | KV moved GB | decode rank max/mean |\n");
    sb.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (PdLabSimulation.Result r : results) {
      sb.append(
          String.format(
              Locale.ROOT,
              "| %s | %.0f%% | %.0f / %.0f / %.0f | %.1f / %.1f | %.3f | %.3f | %.1f | %.2f |%n",
              r.scheme(),
              100 * r.disaggregated(),
              r.ttft().p50(),
              r.ttft().p90(),
              r.ttft().p99(),
              r.tpot().p50(),
              r.tpot().p90(),
              r.prefillHitRate(),
              r.decodeHitRate(),
              r.transferredGb(),
              r.rankImbalance()));
    }
    return sb.toString();
  }

  /** Writes {@code report.md} to {@code dir}. */
  public static void write(Path dir, String markdown) throws IOException {
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("report.md"), markdown);
  }
}

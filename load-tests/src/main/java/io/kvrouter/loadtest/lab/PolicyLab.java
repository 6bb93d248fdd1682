package io.kvrouter.loadtest.lab;

import io.kvrouter.loadtest.workload.Workload;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Runs a lab: computes the prompts' router keys and the single-cache bound once, then replays the
 * workload once per policy ({@link LabSimulation}), policies in parallel on a small pool, and
 * optionally writes {@code results.json}, {@code report.md} and the charts.
 *
 * <p>Cost: the sum of the policies' simulations divided by the pool size, plus O(prompt blocks) for
 * the keys; memory: the keys plus, per running policy, its engines' and routers' indexes. Each call
 * is independent; thread-safe.
 */
public final class PolicyLab {

  private PolicyLab() {}

  /**
   * Replays {@code workload} for every policy of {@code config}.
   *
   * @param threads policies simulated at once (2 suits a 2-core machine)
   * @param command the command line to record in the report
   */
  public static LabResults run(Workload workload, LabConfig config, int threads, String command) {
    long wall = System.nanoTime();
    PromptKeys keys = keys(workload, config);
    SingleCacheBound bound =
        SingleCacheBound.of(workload, keys, (long) config.replicas() * config.capacityBlocks());
    ExecutorService pool =
        Executors.newFixedThreadPool(
            Math.max(1, threads),
            r -> {
              Thread t = new Thread(r, "lab-policy");
              t.setDaemon(true);
              return t;
            });
    try {
      // Longest first (the baselines that keep trees of their own are the slowest), so the
      // pool does not end on one long task.
      List<String> order = new ArrayList<>(config.policies());
      order.sort(java.util.Comparator.comparingInt(PolicyLab::expectedCost).reversed());
      java.util.Map<String, Future<PolicyResult>> byName = new java.util.HashMap<>();
      for (String policy : order) {
        byName.put(policy, pool.submit(() -> LabSimulation.run(workload, keys, config, policy)));
      }
      List<Future<PolicyResult>> futures = new ArrayList<>();
      for (String policy : config.policies()) {
        futures.add(byName.get(policy));
      }
      List<PolicyResult> results = new ArrayList<>();
      for (Future<PolicyResult> f : futures) {
        results.add(f.get());
      }
      return new LabResults(
          workload.name(),
          workload.size(),
          config,
          bound,
          results,
          command,
          (System.nanoTime() - wall) / 1_000_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException(
          "a policy's simulation failed: " + e.getCause(), e.getCause());
    } finally {
      pool.shutdownNow();
    }
  }

  /** The prompts' router keys, with the adapters and images {@code config} assigns them. */
  static PromptKeys keys(Workload workload, LabConfig config) {
    return PromptKeys.compute(
        workload,
        LabConfig.MODEL,
        config.blockSize(),
        LabAdapters.assign(workload, config.adapters(), config.adapterZipf(), config.seed()),
        LabAdapters.images(workload, config.images(), config.imageZipf(), config.seed()),
        config.imageTokens());
  }

  /** Rough relative cost of a policy's simulation, measured on the conversation trace. */
  private static int expectedCost(String policy) {
    return switch (policy) {
      case "sglang_cache_aware", "preble_e2" -> 3;
      case "tgi_trie", "dynamo_kv", "round_robin", "chwbl", "random", "least_loaded" -> 2;
      default -> 1;
    };
  }

  /** Writes results.json, report.md and the PNG charts into {@code out}. */
  public static void write(LabResults results, Path out) throws IOException {
    java.nio.file.Files.createDirectories(out);
    ResultsJson.write(results, out.resolve("results.json"));
    List<String> charts = LabCharts.write(results, out);
    LabReport.write(results, charts, out.resolve("report.md"));
  }
}

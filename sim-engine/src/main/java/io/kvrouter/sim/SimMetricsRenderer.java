package io.kvrouter.sim;

import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * Renders the sim's {@code /metrics} in Prometheus text format: vLLM's names and labels ({@code
 * vllm/v1/metrics/loggers.py}: one sample per engine, labelled {@code engine="<index>"}, which is
 * the data-parallel rank) plus TGI's prefix-cache counters summed over the ranks. Reading any
 * engine's {@code /metrics} is {@code io.kvrouter.protocol.metrics.PrometheusText}'s job.
 */
final class SimMetricsRenderer {

  /**
   * vLLM's cache configuration as an info gauge, value 1, one sample per engine, labelled with
   * {@code CacheConfig.metrics_info()} ({@code vllm/v1/metrics/loggers.py}, {@code
   * log_metrics_info}); the sim publishes the labels an agent reads: block size and hash algorithm.
   */
  static final String CACHE_CONFIG_INFO = "vllm:cache_config_info";

  private SimMetricsRenderer() {}

  /** One engine's figures, for a sim without data parallelism. */
  static String render(String model, RealTimeEngine.Stats s) {
    return render(model, List.of(s), List.of(0));
  }

  /** Every rank's figures, after the cache configuration vLLM publishes once per rank. */
  static String render(String model, List<RealTimeEngine> ranks) {
    StringBuilder sb = new StringBuilder();
    head(sb, CACHE_CONFIG_INFO, "gauge", "Information of the LLMEngine CacheConfig.");
    for (RealTimeEngine rank : ranks) {
      sb.append(CACHE_CONFIG_INFO)
          .append("{block_size=\"")
          .append(rank.config().blockSize())
          .append("\",enable_prefix_caching=\"True\",prefix_caching_hash_algo=\"")
          .append(VllmBlockHasher.HASH_ALGO)
          .append("\",engine=\"")
          .append(rank.dpRank())
          .append("\"} 1.0\n");
    }
    return sb
        + render(
            model,
            ranks.stream().map(RealTimeEngine::stats).toList(),
            ranks.stream().map(RealTimeEngine::dpRank).toList());
  }

  private static String render(
      String model, List<RealTimeEngine.Stats> stats, List<Integer> ranks) {
    StringBuilder sb = new StringBuilder(1024 * stats.size());
    String m = model.replace("\"", "\\\"");
    gauge(
        sb,
        "vllm:num_requests_running",
        "Requests in the running batch.",
        m,
        stats,
        ranks,
        s -> s.running());
    gauge(
        sb,
        "vllm:num_requests_waiting",
        "Requests waiting to be scheduled.",
        m,
        stats,
        ranks,
        s -> s.waiting());
    gauge(
        sb,
        "vllm:kv_cache_usage_perc",
        "KV-cache usage, 1 means 100 percent.",
        m,
        stats,
        ranks,
        s -> s.kvUsage());
    counter(
        sb,
        "vllm:prefix_cache_queries",
        "Prefix cache queries, in tokens.",
        m,
        stats,
        ranks,
        s -> s.prefixQueries());
    counter(
        sb,
        "vllm:prefix_cache_hits",
        "Prefix cache hits, in tokens.",
        m,
        stats,
        ranks,
        s -> s.prefixHits());
    counter(
        sb,
        "sim:cpu_tier_loaded_blocks",
        "Blocks loaded back from the CPU offload tier instead of computed (the sim's own name).",
        m,
        stats,
        ranks,
        s -> s.cpuLoadedBlocks());
    double queries = stats.stream().mapToDouble(s -> s.prefixQueries()).sum();
    double hits = stats.stream().mapToDouble(s -> s.prefixHits()).sum();
    head(sb, "tgi_cache_total", "counter", "Prefix cache queries, in tokens (TGI name).");
    sb.append("tgi_cache_total ").append(format(queries)).append('\n');
    head(sb, "tgi_cache_hit", "counter", "Prefix cache hits, in tokens (TGI name).");
    sb.append("tgi_cache_hit ").append(format(hits)).append('\n');
    return sb.toString();
  }

  private static void gauge(
      StringBuilder sb,
      String name,
      String help,
      String model,
      List<RealTimeEngine.Stats> stats,
      List<Integer> ranks,
      ToDoubleFunction<RealTimeEngine.Stats> value) {
    head(sb, name, "gauge", help);
    samples(sb, name, model, stats, ranks, value);
  }

  private static void counter(
      StringBuilder sb,
      String name,
      String help,
      String model,
      List<RealTimeEngine.Stats> stats,
      List<Integer> ranks,
      ToDoubleFunction<RealTimeEngine.Stats> value) {
    head(sb, name + "_total", "counter", help);
    samples(sb, name + "_total", model, stats, ranks, value);
  }

  private static void head(StringBuilder sb, String name, String type, String help) {
    sb.append("# HELP ").append(name).append(' ').append(help).append('\n');
    sb.append("# TYPE ").append(name).append(' ').append(type).append('\n');
  }

  private static void samples(
      StringBuilder sb,
      String name,
      String model,
      List<RealTimeEngine.Stats> stats,
      List<Integer> ranks,
      ToDoubleFunction<RealTimeEngine.Stats> value) {
    for (int i = 0; i < stats.size(); i++) {
      sb.append(name)
          .append("{model_name=\"")
          .append(model)
          .append("\",engine=\"")
          .append(ranks.get(i))
          .append("\"} ")
          .append(format(value.applyAsDouble(stats.get(i))))
          .append('\n');
    }
  }

  private static String format(double v) {
    return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : Double.toString(v);
  }
}

package io.kvrouter.agent.sim;

/**
 * Renders the sim's {@code /metrics} in Prometheus text format: vLLM's names and labels ({@code
 * vllm/v1/metrics/loggers.py}) plus TGI's prefix-cache counters. Reading any engine's {@code
 * /metrics} is {@code io.kvrouter.protocol.metrics.PrometheusText}'s job.
 */
final class SimMetricsRenderer {

  private SimMetricsRenderer() {}

  static String render(String model, RealTimeEngine.Stats s) {
    String l = "{model_name=\"" + model.replace("\"", "\\\"") + "\",engine=\"0\"}";
    StringBuilder sb = new StringBuilder(1024);
    metric(
        sb, "vllm:num_requests_running", "gauge", "Requests in the running batch.", l, s.running());
    metric(
        sb,
        "vllm:num_requests_waiting",
        "gauge",
        "Requests waiting to be scheduled.",
        l,
        s.waiting());
    metric(
        sb,
        "vllm:kv_cache_usage_perc",
        "gauge",
        "KV-cache usage, 1 means 100 percent.",
        l,
        s.kvUsage());
    counter(
        sb, "vllm:prefix_cache_queries", "Prefix cache queries, in tokens.", l, s.prefixQueries());
    counter(sb, "vllm:prefix_cache_hits", "Prefix cache hits, in tokens.", l, s.prefixHits());
    metric(
        sb,
        "tgi_cache_total",
        "counter",
        "Prefix cache queries, in tokens (TGI name).",
        "",
        s.prefixQueries());
    metric(
        sb,
        "tgi_cache_hit",
        "counter",
        "Prefix cache hits, in tokens (TGI name).",
        "",
        s.prefixHits());
    return sb.toString();
  }

  private static void counter(StringBuilder sb, String name, String help, String labels, double v) {
    sb.append("# HELP ").append(name).append("_total ").append(help).append('\n');
    sb.append("# TYPE ").append(name).append("_total counter\n");
    sb.append(name).append("_total").append(labels).append(' ').append(format(v)).append('\n');
  }

  private static void metric(
      StringBuilder sb, String name, String type, String help, String labels, double v) {
    sb.append("# HELP ").append(name).append(' ').append(help).append('\n');
    sb.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    sb.append(name).append(labels).append(' ').append(format(v)).append('\n');
  }

  private static String format(double v) {
    return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : Double.toString(v);
  }
}

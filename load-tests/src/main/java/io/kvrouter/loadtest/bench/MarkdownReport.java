package io.kvrouter.loadtest.bench;

import java.util.Locale;

/**
 * Renders a {@link BenchSummary} as a short Markdown report: the command line, the counts, one
 * latency table (corrected and uncorrected), throughput, cache figures and per-target counts.
 * Stateless; cost: O(targets + engines) lines.
 */
public final class MarkdownReport {

  private MarkdownReport() {}

  /** The report text. */
  public static String render(BenchSummary s) {
    StringBuilder md = new StringBuilder();
    md.append("# kvrouter bench: ").append(s.workload());
    if (!s.label().isEmpty()) {
      md.append(" (").append(s.label()).append(')');
    }
    md.append("\n\n");
    if (!s.commandLine().isEmpty()) {
      md.append("```\n").append(s.commandLine()).append("\n```\n\n");
    }
    BenchSummary.ConfigView c = s.config();
    md.append("Started ")
        .append(s.startedAt())
        .append(", ran ")
        .append(f(s.durationSeconds()))
        .append(" s against ")
        .append(String.join(", ", c.targets()))
        .append(" (")
        .append(c.targetPolicy())
        .append(", ")
        .append(c.endpoint())
        .append(", model `")
        .append(c.model())
        .append("`).\n\n");
    if (s.stoppedEarly()) {
      md.append(
          "**Stopped early**: the figures cover the requests that finished before the stop.\n\n");
    }
    BenchSummary.Counts n = s.counts();
    md.append(
        "| requests | sent | ok | errors (http/stream/send) | timeouts | dropped | cancelled |\n");
    md.append("|---:|---:|---:|---:|---:|---:|---:|\n");
    md.append("| ")
        .append(n.total())
        .append(" | ")
        .append(n.sent())
        .append(" | ")
        .append(n.ok())
        .append(" | ")
        .append(n.errors())
        .append(" (")
        .append(n.httpErrors())
        .append('/')
        .append(n.streamErrors())
        .append('/')
        .append(n.sendErrors())
        .append(") | ")
        .append(n.timeouts())
        .append(" | ")
        .append(n.dropped())
        .append(" | ")
        .append(n.cancelled())
        .append(" |\n\n");

    md.append("| latency (ms) | count | p50 | p90 | p99 | max | mean |\n");
    md.append("|---|---:|---:|---:|---:|---:|---:|\n");
    BenchSummary.Latencies l = s.latencyMs();
    row(md, "TTFT (from intended start)", l.ttft().corrected());
    row(md, "TTFT (from send)", l.ttft().uncorrected());
    row(md, "ITL (between chunks)", l.itl());
    row(md, "end-to-end (from intended start)", l.e2e().corrected());
    row(md, "end-to-end (from send)", l.e2e().uncorrected());
    row(md, "send lag", l.sendLag());
    md.append('\n');

    BenchSummary.Throughput t = s.throughput();
    md.append("Throughput: ")
        .append(f(t.requestsPerSecond()))
        .append(" req/s, ")
        .append(f(t.outputTokensPerSecond()))
        .append(" output tokens/s, ")
        .append(f(t.promptTokensPerSecond()))
        .append(" prompt tokens/s.\n\n");

    BenchSummary.Engines e = s.engines();
    md.append("Engine-side prefix-cache hit rate during the run (Δhits/Δqueries over ")
        .append(e.perEngine().size())
        .append(" engines): **")
        .append(pct(e.hitRate()))
        .append("**");
    BenchSummary.Tokens tok = s.tokens();
    md.append("; client-side cached-token ratio from usage: **")
        .append(pct(tok.cachedRatio()))
        .append("** (")
        .append(tok.cached())
        .append(" of the prompt tokens of ")
        .append(tok.requestsWithCached())
        .append(" requests reporting cached tokens).\n\n");
    if (!e.perEngine().isEmpty()) {
      md.append(
          "| engine | Δqueries | Δhits | hit rate | cumulative before | cumulative after | Δrequests |\n");
      md.append("|---|---:|---:|---:|---:|---:|---:|\n");
      for (EngineDelta d : e.perEngine()) {
        md.append("| ")
            .append(d.url())
            .append(" | ")
            .append(num(d.deltaQueries()))
            .append(" | ")
            .append(num(d.deltaHits()))
            .append(" | ")
            .append(pct(d.hitRate()))
            .append(" | ")
            .append(pct(d.hitRateBefore()))
            .append(" | ")
            .append(pct(d.hitRateAfter()))
            .append(" | ")
            .append(num(d.deltaRequests()))
            .append(d.error() == null ? "" : " (" + d.error() + ")")
            .append(" |\n");
      }
      md.append('\n');
    }
    md.append("| target | sent | ok | errors | timeouts |\n|---|---:|---:|---:|---:|\n");
    for (BenchSummary.TargetCounts tc : s.targets()) {
      md.append("| ")
          .append(tc.url())
          .append(" | ")
          .append(tc.sent())
          .append(" | ")
          .append(tc.ok())
          .append(" | ")
          .append(tc.errors())
          .append(" | ")
          .append(tc.timeouts())
          .append(" |\n");
    }
    if (!s.errorSamples().isEmpty()) {
      md.append("\nErrors seen:\n\n");
      for (String err : s.errorSamples()) {
        md.append("- ").append(err.replace('\n', ' ')).append('\n');
      }
    }
    return md.toString();
  }

  private static void row(StringBuilder md, String name, LatencySummary l) {
    md.append("| ")
        .append(name)
        .append(" | ")
        .append(l.count())
        .append(" | ")
        .append(f(l.p50()))
        .append(" | ")
        .append(f(l.p90()))
        .append(" | ")
        .append(f(l.p99()))
        .append(" | ")
        .append(f(l.max()))
        .append(" | ")
        .append(f(l.mean()))
        .append(" |\n");
  }

  private static String f(double v) {
    return String.format(Locale.ROOT, "%.2f", v);
  }

  private static String pct(Double v) {
    return v == null ? "n/a" : String.format(Locale.ROOT, "%.1f%%", v * 100);
  }

  private static String num(Double v) {
    return v == null ? "n/a" : String.format(Locale.ROOT, "%.0f", v);
  }
}

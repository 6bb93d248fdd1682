package io.kvrouter.loadtest.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Puts several runs side by side, for example the same shared-prefix workload through the
 * cache-aware router and through round robin: one Markdown table with a column per run and a row
 * per headline figure (engine hit rate, cached-token ratio, TTFT, ITL, end-to-end, throughput,
 * failures).
 *
 * <p>Reads {@code results.json} files as JSON trees, not as {@link BenchSummary} records, so a file
 * written by an older version with fewer fields still renders (missing figures show as {@code
 * n/a}). Stateless; cost: O(runs × rows).
 */
public final class ComparisonReport {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private ComparisonReport() {}

  /**
   * Reads the results of each path: a {@code results.json} file or a directory holding one.
   *
   * @throws IOException if a file is missing or not JSON
   */
  public static List<JsonNode> read(List<Path> paths) throws IOException {
    List<JsonNode> out = new ArrayList<>(paths.size());
    for (Path p : paths) {
      Path file = Files.isDirectory(p) ? p.resolve(ResultsWriter.RESULTS_JSON) : p;
      out.add(MAPPER.readTree(file.toFile()));
    }
    return out;
  }

  /** The summary as a JSON tree, to compare a run just made with files read from disk. */
  public static JsonNode tree(BenchSummary summary) {
    return MAPPER.valueToTree(summary);
  }

  /** The comparison table; runs are named by label, else by target list. */
  public static String render(List<JsonNode> runs) {
    StringBuilder md = new StringBuilder("# kvrouter bench: comparison\n\n");
    md.append("| |");
    for (JsonNode r : runs) {
      String label = r.path("label").asText("");
      md.append(' ')
          .append(
              label.isEmpty() ? String.join(", ", texts(r.path("config").path("targets"))) : label)
          .append(" |");
    }
    md.append("\n|---|");
    md.append("---:|".repeat(runs.size()));
    md.append('\n');
    row(md, runs, "workload", r -> r.path("workload").asText("n/a"));
    row(
        md,
        runs,
        "requests ok / total",
        r ->
            r.path("counts").path("ok").asText("?")
                + " / "
                + r.path("counts").path("total").asText("?"));
    row(
        md,
        runs,
        "errors + timeouts + dropped + cancelled",
        r ->
            String.valueOf(
                r.path("counts").path("errors").asInt()
                    + r.path("counts").path("timeouts").asInt()
                    + r.path("counts").path("dropped").asInt()
                    + r.path("counts").path("cancelled").asInt()));
    row(md, runs, "stopped early", r -> r.path("stoppedEarly").asBoolean() ? "yes" : "no");
    row(md, runs, "engine hit rate (Δhits/Δqueries)", r -> pct(r.path("engines").path("hitRate")));
    row(md, runs, "cached-token ratio (usage)", r -> pct(r.path("tokens").path("cachedRatio")));
    row(md, runs, "TTFT p50 ms", r -> ms(r, "ttft", "p50"));
    row(md, runs, "TTFT p99 ms", r -> ms(r, "ttft", "p99"));
    row(md, runs, "ITL p50 ms", r -> num(r.path("latencyMs").path("itl").path("p50")));
    row(md, runs, "ITL p99 ms", r -> num(r.path("latencyMs").path("itl").path("p99")));
    row(md, runs, "end-to-end p50 ms", r -> ms(r, "e2e", "p50"));
    row(md, runs, "end-to-end p99 ms", r -> ms(r, "e2e", "p99"));
    row(md, runs, "requests/s", r -> num(r.path("throughput").path("requestsPerSecond")));
    row(md, runs, "output tokens/s", r -> num(r.path("throughput").path("outputTokensPerSecond")));
    md.append(
        "\nLatencies are measured from each request's intended start (corrected for coordinated omission).\n");
    return md.toString();
  }

  private interface Cell {
    String of(JsonNode run);
  }

  private static void row(StringBuilder md, List<JsonNode> runs, String name, Cell cell) {
    md.append("| ").append(name).append(" |");
    for (JsonNode r : runs) {
      md.append(' ').append(cell.of(r)).append(" |");
    }
    md.append('\n');
  }

  private static String ms(JsonNode run, String metric, String percentile) {
    return num(run.path("latencyMs").path(metric).path("corrected").path(percentile));
  }

  private static String num(JsonNode n) {
    return n.isNumber() ? String.format(Locale.ROOT, "%.2f", n.asDouble()) : "n/a";
  }

  private static String pct(JsonNode n) {
    return n.isNumber() ? String.format(Locale.ROOT, "%.1f%%", n.asDouble() * 100) : "n/a";
  }

  private static List<String> texts(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out.isEmpty() ? List.of("?") : out;
  }
}

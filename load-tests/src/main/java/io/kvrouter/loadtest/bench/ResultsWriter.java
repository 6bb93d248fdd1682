package io.kvrouter.loadtest.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes a run's {@code results.json} (the {@link BenchSummary}, pretty-printed, fields in
 * declaration order), {@code report.md} ({@link MarkdownReport}) and optionally {@code
 * requests.csv} ({@link RequestsCsv}) and {@code ttft_over_time.png} ({@link TtftChart}) into a
 * directory, creating it if needed, and optionally a {@code comparison.md}. Stateless; cost: a few
 * KB per file.
 */
public final class ResultsWriter {

  /** File name of the JSON results. */
  public static final String RESULTS_JSON = "results.json";

  /** File name of the Markdown report. */
  public static final String REPORT_MD = "report.md";

  /** File name of the per-request lines ({@link RequestsCsv}). */
  public static final String REQUESTS_CSV = "requests.csv";

  /** File name of the side-by-side comparison ({@link ComparisonReport}). */
  public static final String COMPARISON_MD = "comparison.md";

  private static final ObjectMapper MAPPER =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private ResultsWriter() {}

  /** The summary as JSON text. */
  public static String json(BenchSummary summary) {
    try {
      return MAPPER.writeValueAsString(summary) + "\n";
    } catch (IOException e) {
      throw new IllegalStateException("cannot serialize the summary", e);
    }
  }

  /** Writes {@code results.json} and {@code report.md} into {@code dir}. */
  public static void write(Path dir, BenchSummary summary) throws IOException {
    Files.createDirectories(dir);
    Files.writeString(dir.resolve(RESULTS_JSON), json(summary), StandardCharsets.UTF_8);
    Files.writeString(
        dir.resolve(REPORT_MD), MarkdownReport.render(summary), StandardCharsets.UTF_8);
  }

  /**
   * Writes {@code results.json}, {@code report.md}, {@code requests.csv} and the {@link TtftChart}
   * into {@code dir}.
   */
  public static void write(Path dir, BenchSummary summary, BenchRun run) throws IOException {
    write(dir, summary);
    try (Writer w = Files.newBufferedWriter(dir.resolve(REQUESTS_CSV), StandardCharsets.UTF_8)) {
      RequestsCsv.write(run.outcomes(), summary.config().targets(), w);
    }
    String title =
        "TTFT over time, "
            + summary.workload()
            + (summary.label().isEmpty() ? "" : ", " + summary.label());
    TtftChart.write(run, summary.config().targets(), title, dir);
  }

  /** Writes {@code markdown} as {@code comparison.md} into {@code dir}. */
  public static void writeComparison(Path dir, String markdown) throws IOException {
    Files.createDirectories(dir);
    Files.writeString(dir.resolve(COMPARISON_MD), markdown, StandardCharsets.UTF_8);
  }
}

package io.kvrouter.loadtest.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ComparisonReportTest {

  private static BenchSummary summary(String label, double hitsAfter) {
    URI e = URI.create("http://e:1/metrics");
    RequestOutcome ok =
        new RequestOutcome(
            0,
            0,
            "",
            RequestOutcome.Status.OK,
            200,
            null,
            0,
            0,
            9_000_000,
            new long[] {2_000_000, 4_000_000},
            10,
            2,
            5);
    BenchRun run =
        new BenchRun(
            BenchConfig.defaults(List.of(URI.create("http://x:1")), "m"),
            "m",
            "shared-prefix",
            Instant.EPOCH,
            1_000_000_000L,
            List.of(ok),
            List.of(new EngineSnapshot(e, null, 0.0, 0.0, null)),
            List.of(new EngineSnapshot(e, null, 100.0, hitsAfter, null)),
            false);
    return BenchSummary.of(run, "kvrouter bench --label " + label, label);
  }

  @Test
  void runsFromDiskAndFromMemoryGoSideBySide(@TempDir Path dir) throws Exception {
    ResultsWriter.write(dir.resolve("rr"), summary("round-robin", 12));
    Files.writeString(dir.resolve("old.json"), "{\"workload\":\"old\"}");
    List<JsonNode> runs =
        new java.util.ArrayList<>(
            ComparisonReport.read(List.of(dir.resolve("rr"), dir.resolve("old.json"))));
    runs.add(ComparisonReport.tree(summary("kv-aware", 80)));
    String md = ComparisonReport.render(runs);
    assertThat(md).contains("| | round-robin | ? | kv-aware |");
    assertThat(md).contains("| engine hit rate (Δhits/Δqueries) | 12.0% | n/a | 80.0% |");
    assertThat(md).contains("| cached-token ratio (usage) | 50.0% | n/a | 50.0% |");
    assertThat(md).contains("| TTFT p50 ms | 2.00 | n/a | 2.00 |");
    assertThat(md).contains("| requests ok / total | 1 / 1 | ? / ? | 1 / 1 |");
    assertThat(MarkdownReport.render(summary("kv-aware", 80)))
        .startsWith("# kvrouter bench: shared-prefix (kv-aware)");
  }
}

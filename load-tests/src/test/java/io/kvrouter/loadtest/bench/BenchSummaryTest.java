package io.kvrouter.loadtest.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BenchSummaryTest {

  private static final long MS = 1_000_000L;

  /** HdrHistogram reports the top of a value's bucket: three significant digits. */
  private static final org.assertj.core.data.Offset<Double> HDR =
      org.assertj.core.data.Offset.offset(0.02);

  private static RequestOutcome ok(
      int index,
      int target,
      long intended,
      long sent,
      long[] chunks,
      long end,
      int prompt,
      int cached) {
    return new RequestOutcome(
        index,
        target,
        "",
        RequestOutcome.Status.OK,
        200,
        null,
        intended,
        sent,
        end,
        chunks,
        prompt,
        chunks.length,
        cached);
  }

  @Test
  void figuresFromOutcomes() {
    BenchConfig cfg =
        BenchConfig.defaults(List.of(URI.create("http://a:1"), URI.create("http://b:2")), "m");
    List<RequestOutcome> outcomes = new ArrayList<>();
    // sent 5 ms late: corrected TTFT 15 ms, uncorrected 10 ms
    outcomes.add(ok(0, 0, 0, 5 * MS, new long[] {15 * MS, 17 * MS, 20 * MS}, 25 * MS, 100, 60));
    outcomes.add(ok(1, 1, 10 * MS, 10 * MS, new long[] {25 * MS, 29 * MS}, 30 * MS, 100, -1));
    outcomes.add(
        new RequestOutcome(
            2,
            0,
            "",
            RequestOutcome.Status.HTTP_ERROR,
            503,
            "HTTP 503: busy",
            20 * MS,
            20 * MS,
            21 * MS,
            new long[0],
            -1,
            -1,
            -1));
    outcomes.add(RequestOutcome.dropped(3, "", 30 * MS));
    BenchRun run =
        new BenchRun(
            cfg, "m", "test", Instant.EPOCH, 2_000 * MS, outcomes, List.of(), List.of(), false);

    BenchSummary s = BenchSummary.of(run, "kvrouter bench --url http://a:1,http://b:2");
    assertThat(s.counts()).isEqualTo(new BenchSummary.Counts(4, 3, 2, 1, 1, 0, 0, 0, 1, 0));
    assertThat(s.latencyMs().ttft().corrected().max()).isCloseTo(15.0, HDR);
    assertThat(s.latencyMs().ttft().uncorrected().max()).isCloseTo(15.0, HDR);
    assertThat(s.latencyMs().ttft().uncorrected().p50()).isCloseTo(10.0, HDR);
    assertThat(s.latencyMs().e2e().corrected().max()).isCloseTo(25.0, HDR);
    assertThat(s.latencyMs().e2e().uncorrected().max()).isCloseTo(20.0, HDR);
    assertThat(s.latencyMs().itl().count()).isEqualTo(3);
    assertThat(s.latencyMs().itl().max()).isCloseTo(4.0, HDR);
    assertThat(s.latencyMs().sendLag().max()).isCloseTo(5.0, HDR);
    assertThat(s.throughput().requestsPerSecond()).isEqualTo(1.0);
    assertThat(s.throughput().outputTokensPerSecond()).isEqualTo(2.5);
    assertThat(s.tokens().prompt()).isEqualTo(200);
    assertThat(s.tokens().requestsWithCached()).isEqualTo(1);
    assertThat(s.tokens().cachedRatio()).isEqualTo(0.6);
    assertThat(s.targets()).extracting(BenchSummary.TargetCounts::sent).containsExactly(2, 1);
    assertThat(s.targets()).extracting(BenchSummary.TargetCounts::errors).containsExactly(1, 0);
    assertThat(s.engines().hitRate()).isNull();
    assertThat(s.errorSamples())
        .containsExactly("HTTP_ERROR: HTTP 503: busy", "DROPPED: concurrency cap reached");

    String json = ResultsWriter.json(s);
    assertThat(json)
        .contains("\"commandLine\" : \"kvrouter bench --url http://a:1,http://b:2\"")
        .contains("\"hitRate\" : null")
        .doesNotContain("NaN");
    String md = MarkdownReport.render(s);
    assertThat(md).contains("| TTFT (from intended start) | 2 |").contains("n/a").contains("60.0%");
  }

  @Test
  void engineHitRatePoolsDeltasOverEngines() {
    URI a = URI.create("http://e1:1/metrics");
    URI b = URI.create("http://e2:1/metrics");
    BenchRun run =
        new BenchRun(
            BenchConfig.defaults(List.of(URI.create("http://x:1")), "m"),
            "m",
            "t",
            Instant.EPOCH,
            MS,
            List.of(),
            List.of(
                new EngineSnapshot(a, null, 0.0, 0.0, null),
                new EngineSnapshot(b, null, 100.0, 0.0, null)),
            List.of(
                new EngineSnapshot(a, null, 100.0, 90.0, null),
                new EngineSnapshot(b, null, 400.0, 10.0, null)),
            false);
    BenchSummary s = BenchSummary.of(run, null);
    assertThat(s.engines().deltaQueries()).isEqualTo(400.0);
    assertThat(s.engines().hitRate()).isEqualTo(0.25);
    assertThat(s.engines().perEngine())
        .extracting(EngineDelta::hitRate)
        .containsExactly(0.9, 10.0 / 300);
  }
}

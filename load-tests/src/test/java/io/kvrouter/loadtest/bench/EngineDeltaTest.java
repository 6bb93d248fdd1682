package io.kvrouter.loadtest.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.util.List;
import org.junit.jupiter.api.Test;

class EngineDeltaTest {

  private static final URI U = URI.create("http://127.0.0.1:1/metrics");

  @Test
  void hitRateIsTheRatioOfDeltas_notOfCumulativeCounters() {
    EngineDelta d =
        EngineDelta.between(
            new EngineSnapshot(U, null, 1000.0, 900.0, 5.0),
            new EngineSnapshot(U, null, 1400.0, 1000.0, 9.0));
    assertThat(d.deltaQueries()).isEqualTo(400.0);
    assertThat(d.deltaHits()).isEqualTo(100.0);
    assertThat(d.hitRate()).isEqualTo(0.25);
    assertThat(d.hitRateBefore()).isEqualTo(0.9);
    assertThat(d.hitRateAfter()).isEqualTo(1000.0 / 1400.0);
    assertThat(d.deltaRequests()).isEqualTo(4.0);
    assertThat(d.error()).isNull();
  }

  @Test
  void counterReset_failedScrape_orNoQueries_giveNoRate() {
    EngineDelta reset =
        EngineDelta.between(
            new EngineSnapshot(U, null, 1000.0, 900.0, null),
            new EngineSnapshot(U, null, 10.0, 5.0, null));
    assertThat(reset.deltaQueries()).isNull();
    assertThat(reset.hitRate()).isNull();
    EngineDelta failed =
        EngineDelta.between(
            new EngineSnapshot(U, "HTTP 404", null, null, null),
            new EngineSnapshot(U, null, 10.0, 5.0, null));
    assertThat(failed.hitRate()).isNull();
    assertThat(failed.error()).contains("HTTP 404");
    EngineDelta idle =
        EngineDelta.between(
            new EngineSnapshot(U, null, 10.0, 5.0, null),
            new EngineSnapshot(U, null, 10.0, 5.0, null));
    assertThat(idle.deltaQueries()).isZero();
    assertThat(idle.hitRate()).isNull();
  }

  @Test
  void snapshotFromText_andMetricsUriDefaulting() {
    EngineSnapshot s =
        EngineMetricsScraper.fromText(
            U,
            """
                vllm:prefix_cache_queries_total{engine="0"} 30
                vllm:prefix_cache_hits_total{engine="0"} 12
                """);
    assertThat(s.queries()).isEqualTo(30.0);
    assertThat(s.hits()).isEqualTo(12.0);
    assertThat(s.requestSuccess()).isNull();
    assertThat(EngineMetricsScraper.metricsUri(URI.create("http://h:8000")))
        .hasToString("http://h:8000/metrics");
    assertThat(EngineMetricsScraper.metricsUri(URI.create("http://h:8000/")))
        .hasToString("http://h:8000/metrics");
    assertThat(EngineMetricsScraper.metricsUri(URI.create("http://h:9/prom")))
        .hasToString("http://h:9/prom");
    assertThat(EngineDelta.between(List.of(), List.of())).isEmpty();
  }
}

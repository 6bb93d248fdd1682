package io.kvrouter.loadtest.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.metrics.PrometheusText;
import org.junit.jupiter.api.Test;

class EngineMetricsScraperTest {

  @Test
  void sumFirst_fallsBackToTheOldVllmNames() {
    PrometheusText.Parsed p =
        PrometheusText.parse("vllm:gpu_prefix_cache_queries_total{engine=\"0\"} 12\n");
    assertThat(p.sumFirst(EngineMetricsScraper.QUERIES)).hasValue(12.0);
  }
}

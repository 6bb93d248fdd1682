package io.kvrouter.protocol.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class PrometheusTextTest {

  @Test
  void sumsACounterOverItsLabelSets_ignoringCommentsAndOtherMetrics() {
    PrometheusText.Parsed p =
        PrometheusText.parse(
            """
                # HELP vllm:prefix_cache_hits_total Hits.
                # TYPE vllm:prefix_cache_hits_total counter
                vllm:prefix_cache_hits_total{engine="0",model_name="m"} 10.0
                vllm:prefix_cache_hits_total{engine="1",model_name="m"} 5
                vllm:prefix_cache_hits_created{engine="0",model_name="m"} 1.7e9
                vllm:prefix_cache_queries_total 40
                """);
    assertThat(p.sum("vllm:prefix_cache_hits_total")).hasValue(15.0);
    assertThat(p.sum("vllm:prefix_cache_queries_total")).hasValue(40.0);
    assertThat(p.sum("vllm:absent")).isEmpty();
    assertThat(p.skippedLines()).isZero();
  }

  @Test
  void readsSpecialValuesExponentsAndTimestamps() {
    PrometheusText.Parsed p =
        PrometheusText.parse(
            """
                a{le="+Inf"} +Inf
                b -Inf
                c NaN
                d 1.5e+06 1700000000000
                e 2E-3
                f\t7
                """);
    assertThat(p.samples())
        .extracting(PrometheusText.Sample::value)
        .containsExactly(
            Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.NaN, 1.5e6, 0.002, 7.0);
    assertThat(p.samples().get(0).labels()).containsEntry("le", "+Inf");
    assertThat(p.sum("c")).hasValue(0.0); // NaN samples are skipped in sums
  }

  @Test
  void labelValuesMayHoldEscapesCommasBracesAndSpaces() {
    PrometheusText.Sample s =
        PrometheusText.parseLine(
            "x{path=\"/a,b}\",msg=\"say \\\"hi\\\"\\n\",back=\"c:\\\\d\" , } 3");
    assertThat(s).isNotNull();
    assertThat(s.labels())
        .isEqualTo(Map.of("path", "/a,b}", "msg", "say \"hi\"\n", "back", "c:\\d"));
    assertThat(s.value()).isEqualTo(3.0);
  }

  @Test
  void openMetricsExemplarsAndEofAreTolerated() {
    PrometheusText.Parsed p =
        PrometheusText.parse("foo_total{a=\"1\"} 17 # {trace_id=\"abc\"} 1.0 1620000000\n# EOF\n");
    assertThat(p.sum("foo_total")).hasValue(17.0);
  }

  @Test
  void malformedLinesAreSkippedAndCounted() {
    PrometheusText.Parsed p =
        PrometheusText.parse(
            """
                ok 1
                {no_name="x"} 1
                bad{unclosed="x 1
                novalue
                hex 0x1p3
                word{a="b"} twelve
                also_ok{a="b"} 2
                """);
    assertThat(p.samples())
        .extracting(PrometheusText.Sample::name)
        .containsExactly("ok", "also_ok");
    assertThat(p.skippedLines()).isEqualTo(5);
  }

  @Test
  void sums_giveEachMetricsTotalOverItsLabelSets() {
    PrometheusText.Parsed p =
        PrometheusText.parse(
            """
                # TYPE vllm:num_requests_running gauge
                vllm:num_requests_running{engine="0"} 3
                vllm:num_requests_running{engine="1"} 4
                vllm:kv_cache_usage_perc{engine="0"} 0.25
                """);
    assertThat(p.sums())
        .containsExactly(
            Map.entry("vllm:num_requests_running", 7.0),
            Map.entry("vllm:kv_cache_usage_perc", 0.25));
  }
}

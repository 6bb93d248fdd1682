package io.kvrouter.systemtest.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvrouter.testing.LoopbackHttp;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@code deploy/grafana/dashboards/*.json} against a schema check, and the PromQL reading that
 * {@link GrafanaDashboardIT} checks against what a running demo exports.
 */
class GrafanaDashboardTest {

  static final Path ROOT = Path.of(System.getProperty("user.dir")).resolve("..").normalize();

  /** Every dashboard under {@code deploy/grafana/dashboards}, parsed, in file-name order. */
  static List<JsonNode> dashboards() throws IOException {
    List<JsonNode> dashboards = new ArrayList<>();
    try (Stream<Path> files = Files.list(ROOT.resolve("deploy/grafana/dashboards"))) {
      for (Path f : files.filter(p -> p.toString().endsWith(".json")).sorted().toList()) {
        dashboards.add(LoopbackHttp.JSON.readTree(f.toFile()));
      }
    }
    return dashboards;
  }

  @Test
  void dashboards_haveTheFieldsGrafanaNeeds_uniquePanelIds_andValidGrid() throws Exception {
    List<JsonNode> dashboards = dashboards();
    assertThat(dashboards).isNotEmpty();
    Set<String> uids = new HashSet<>();
    for (JsonNode d : dashboards) {
      assertThat(d.path("title").asText()).isNotBlank();
      assertThat(uids.add(d.path("uid").asText())).as("unique dashboard uid").isTrue();
      assertThat(d.path("uid").asText()).matches("[a-zA-Z0-9_-]{1,40}");
      assertThat(d.path("schemaVersion").isInt()).isTrue();
      assertThat(d.path("panels").isArray()).isTrue();
      assertThat(d.path("time").path("from").asText()).isNotBlank();
      Set<String> variables = new HashSet<>();
      d.path("templating").path("list").forEach(v -> variables.add(v.path("name").asText()));
      Set<Integer> ids = new HashSet<>();
      int queried = 0;
      for (JsonNode p : d.path("panels")) {
        String where = d.path("uid").asText() + " panel " + p.path("title").asText();
        assertThat(ids.add(p.path("id").asInt(-1))).as("%s: unique id", where).isTrue();
        assertThat(p.path("type").asText())
            .as(where)
            .isIn("row", "timeseries", "stat", "gauge", "table", "bargauge");
        assertThat(p.path("title").asText()).as(where).isNotBlank();
        JsonNode g = p.path("gridPos");
        for (String k : List.of("x", "y", "w", "h")) {
          assertThat(g.path(k).isInt()).as("%s: gridPos.%s", where, k).isTrue();
        }
        assertThat(g.path("w").asInt()).as(where).isBetween(1, 24);
        assertThat(g.path("x").asInt() + g.path("w").asInt())
            .as("%s fits 24 columns", where)
            .isLessThanOrEqualTo(24);
        assertThat(g.path("h").asInt()).as(where).isPositive();
        if (p.path("type").asText().equals("row")) {
          continue;
        }
        String ds = p.path("datasource").path("uid").asText();
        assertThat(p.path("datasource").path("type").asText()).as(where).isEqualTo("prometheus");
        if (ds.startsWith("${")) {
          assertThat(variables)
              .as("%s: datasource variable %s defined", where, ds)
              .contains(ds.substring(2, ds.length() - 1));
        }
        assertThat(p.path("targets").size()).as("%s: has queries", where).isPositive();
        Set<String> refIds = new HashSet<>();
        for (JsonNode t : p.path("targets")) {
          assertThat(refIds.add(t.path("refId").asText())).as("%s: unique refId", where).isTrue();
          assertThat(t.path("expr").asText()).as("%s: expr", where).isNotBlank();
          assertThat(PromQlNames.of(t.path("expr").asText()))
              .as("%s: reads a metric", where)
              .isNotEmpty();
          queried++;
        }
      }
      assertThat(queried).isGreaterThan(10);
    }
  }

  @Test
  void promQlNameExtraction_skipsFunctionsLabelsRangesAndStrings() {
    assertThat(
            PromQlNames.of(
                "histogram_quantile(0.99, sum by (le, instance) (rate(kvrouter_event_lag_seconds_bucket{job=\"a b\"}[$__rate_interval])))"))
        .containsExactly("kvrouter_event_lag_seconds_bucket");
    assertThat(
            PromQlNames.of(
                "sum(rate(vllm:prefix_cache_hits_total[5m])) / sum(rate(vllm:prefix_cache_queries_total[5m]))"))
        .containsExactly("vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total");
    assertThat(PromQlNames.of("max by (replica) (kvrouter_prediction_mismatch_alert) > bool 0.5"))
        .containsExactly("kvrouter_prediction_mismatch_alert");
  }
}

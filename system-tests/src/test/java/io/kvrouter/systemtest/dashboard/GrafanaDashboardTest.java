package io.kvrouter.systemtest.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.cli.dev.DemoCluster;
import io.kvrouter.cli.dev.DemoOptions;
import io.kvrouter.loadtest.bench.PseudoWords;
import io.kvrouter.testing.LoopbackHttp;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code deploy/grafana/dashboards/*.json} against a schema check and against what the system
 * really exports: every metric a panel's PromQL reads is one an ingress or an engine of a running
 * demo (after real traffic, one rejected request included) shows at {@code GET /metrics}.
 */
class GrafanaDashboardTest {

  static final Path ROOT = Path.of(System.getProperty("user.dir")).resolve("..").normalize();
  static final Set<String> ISSUE_6_METRICS =
      Set.of(
          "kvrouter_event_lag_seconds",
          "kvrouter_event_gaps_total",
          "kvrouter_replays_total",
          "kvrouter_snapshots_total",
          "kvrouter_digest_mismatches_total",
          "kvrouter_reservation_propagation_seconds");

  static List<JsonNode> dashboards = new ArrayList<>();
  static Set<String> ingressNames = new TreeSet<>();
  static Set<String> engineNames = new TreeSet<>();

  @BeforeAll
  static void readDashboardsAndScrapeADemo() throws Exception {
    try (Stream<Path> files = Files.list(ROOT.resolve("deploy/grafana/dashboards"))) {
      for (Path f : files.filter(p -> p.toString().endsWith(".json")).sorted().toList()) {
        dashboards.add(LoopbackHttp.JSON.readTree(f.toFile()));
      }
    }
    DemoOptions options = DemoOptions.defaults().onFreePorts().withCounts(2, 2).withSpeedup(50);
    try (DemoCluster cluster = DemoCluster.start(options)) {
      cluster.awaitReady(Duration.ofSeconds(60));
      for (int i = 0; i < 8; i++) {
        ObjectNode body =
            LoopbackHttp.JSON.createObjectNode().put("model", options.model()).put("max_tokens", 2);
        body.putArray("messages")
            .addObject()
            .put("role", "user")
            .put("content", PseudoWords.words(1, 200));
        assertThat(
                LoopbackHttp.post(cluster.ingressUrls().get(i % 2) + "/v1/chat/completions", body)
                    .statusCode())
            .isEqualTo(200);
      }
      ObjectNode invalid = LoopbackHttp.JSON.createObjectNode().put("model", options.model());
      assertThat(
              LoopbackHttp.post(cluster.ingressUrls().get(0) + "/v1/chat/completions", invalid)
                  .statusCode())
          .isEqualTo(400);
      // Some meters appear only once the node has something to say (the per-replica in-flight
      // gauges at the ingress's next gauge refresh): scrape until every metric a panel reads is
      // there, or the deadline passes and the tests below name what is missing.
      Set<String> read = new TreeSet<>();
      for (JsonNode d : dashboards) {
        for (JsonNode p : d.path("panels")) {
          for (JsonNode t : p.path("targets")) {
            read.addAll(PromQlNames.of(t.path("expr").asText()));
          }
        }
      }
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      do {
        ingressNames.clear();
        engineNames.clear();
        for (String url : cluster.ingressUrls()) {
          ingressNames.addAll(names(LoopbackHttp.getOk(url + "/metrics")));
        }
        engineNames.addAll(names(LoopbackHttp.getOk(cluster.engineUrls().get(0) + "/metrics")));
        Set<String> missing = new TreeSet<>(read);
        missing.removeAll(ingressNames);
        missing.removeAll(engineNames);
        if (missing.isEmpty()) {
          break;
        }
        Thread.sleep(200); // polling the nodes' metrics, bounded by the deadline
      } while (System.nanoTime() < deadline);
    }
  }

  static Set<String> names(String exposition) {
    Set<String> out = new HashSet<>();
    for (String line : exposition.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      int end = line.indexOf('{');
      out.add(line.substring(0, end >= 0 ? end : line.indexOf(' ')).trim());
    }
    return out;
  }

  @Test
  void dashboards_haveTheFieldsGrafanaNeeds_uniquePanelIds_andValidGrid() {
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
  void everyMetricAPanelReads_isExportedByAnIngressOrAnEngine() {
    assertThat(ingressNames)
        .as("the ingress exports the issue-6 metrics")
        .anySatisfy(n -> assertThat(n).startsWith("kvrouter_event_lag_seconds"));
    Set<String> read = new TreeSet<>();
    for (JsonNode d : dashboards) {
      for (JsonNode p : d.path("panels")) {
        for (JsonNode t : p.path("targets")) {
          for (String name : PromQlNames.of(t.path("expr").asText())) {
            read.add(name);
            Set<String> exported = name.startsWith("vllm:") ? engineNames : ingressNames;
            assertThat(exported)
                .as(
                    "%s (panel %s) is exported; expr %s",
                    name, p.path("title").asText(), t.path("expr").asText())
                .contains(name);
          }
        }
      }
    }
    // Every panel family of the page is there: consistency, routing quality, index accuracy, load.
    assertThat(read)
        .contains(
            "kvrouter_event_lag_seconds_bucket",
            "kvrouter_reservation_propagation_seconds_bucket",
            "kvrouter_event_gaps_total",
            "kvrouter_replays_total",
            "kvrouter_snapshots_total",
            "kvrouter_digest_mismatches_total",
            "kvrouter_predicted_cached_tokens_total",
            "kvrouter_engine_cached_tokens_total",
            "kvrouter_decision_seconds_bucket",
            "kvrouter_prediction_error_tokens_sum",
            "kvrouter_prediction_mismatch_ratio",
            "kvrouter_replica_inflight",
            "kvrouter_replica_lag_ms",
            "vllm:kv_cache_usage_perc",
            "vllm:num_requests_running");
    for (String base : ISSUE_6_METRICS) {
      assertThat(read).as("a panel shows %s", base).anySatisfy(n -> assertThat(n).startsWith(base));
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

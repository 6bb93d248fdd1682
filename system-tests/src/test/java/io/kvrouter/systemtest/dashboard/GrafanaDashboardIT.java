package io.kvrouter.systemtest.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.cli.dev.DemoCluster;
import io.kvrouter.cli.dev.DemoOptions;
import io.kvrouter.loadtest.bench.PseudoWords;
import io.kvrouter.testing.LoopbackHttp;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code deploy/grafana/dashboards/*.json} against what the system really exports: every metric a
 * panel's PromQL reads is one an ingress or an engine of a running demo (after real traffic, one
 * rejected request included) shows at {@code GET /metrics}. ({@link GrafanaDashboardTest} checks
 * the dashboards' own fields.)
 */
class GrafanaDashboardIT {

  static final Set<String> ISSUE_6_METRICS =
      Set.of(
          "kvrouter_event_lag_seconds",
          "kvrouter_event_gaps_total",
          "kvrouter_replays_total",
          "kvrouter_snapshots_total",
          "kvrouter_digest_mismatches_total",
          "kvrouter_reservation_propagation_seconds");

  static List<JsonNode> dashboards;
  static Set<String> ingressNames = new TreeSet<>();
  static Set<String> engineNames = new TreeSet<>();

  @BeforeAll
  static void readDashboardsAndScrapeADemo() throws Exception {
    dashboards = GrafanaDashboardTest.dashboards();
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
      // there, or the deadline passes and the test below names what is missing.
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
}

package io.kvrouter.systemtest.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.cli.dev.DemoCluster;
import io.kvrouter.cli.dev.DemoOptions;
import io.kvrouter.loadtest.bench.PseudoWords;
import io.kvrouter.testing.FreePorts;
import io.kvrouter.testing.LoopbackHttp;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * The Grafana dashboard's queries against a real Prometheus (Debian's {@code prometheus}, 2.42
 * here) scraping a running demo every second: every PromQL expression of {@code
 * deploy/grafana/dashboards/kvrouter.json} returns data. Grafana's {@code $__rate_interval} becomes
 * {@code 30s}. The demo gets what the panels need to have something to show: chat traffic through
 * both ingresses (decisions, cached tokens, reservation propagation, KV event lag), one invalid
 * request (a rejection), a paused-then-resumed event feed (a gap and its replay) and one tracker
 * diverged on purpose then compared (a digest mismatch).
 */
class PrometheusDashboardIT {

  static final Path PROMETHEUS = Path.of("/usr/bin/prometheus");

  @Test
  void everyDashboardQuery_returnsDataFromARealPrometheusScrapingTheDemo() throws Exception {
    assertThat(PROMETHEUS).as("Debian's prometheus package (.ci/run installs it)").exists();
    List<String> exprs = new ArrayList<>();
    JsonNode dashboard =
        LoopbackHttp.JSON.readTree(
            GrafanaDashboardTest.ROOT.resolve("deploy/grafana/dashboards/kvrouter.json").toFile());
    for (JsonNode panel : dashboard.path("panels")) {
      for (JsonNode t : panel.path("targets")) {
        exprs.add(t.path("expr").asText().replace("$__rate_interval", "30s"));
      }
    }
    assertThat(exprs).hasSizeGreaterThan(10);

    DemoOptions options = DemoOptions.defaults().onFreePorts().withCounts(2, 2).withSpeedup(50);
    Process prometheus = null;
    Path dir = Files.createTempDirectory("kvrouter-prometheus");
    try (DemoCluster cluster = DemoCluster.start(options)) {
      cluster.awaitReady(Duration.ofSeconds(60));
      int port = FreePorts.one();
      Files.writeString(
          dir.resolve("prometheus.yml"),
          """
          global:
            scrape_interval: 1s
            evaluation_interval: 1s
          scrape_configs:
            - job_name: kvrouter
              static_configs:
                - targets: [%s]
            - job_name: vllm
              static_configs:
                - targets: [%s]
          """
              .formatted(targets(cluster.ingressUrls()), targets(cluster.engineUrls())));
      prometheus =
          new ProcessBuilder(
                  PROMETHEUS.toString(),
                  "--config.file=" + dir.resolve("prometheus.yml"),
                  "--storage.tsdb.path=" + dir.resolve("data"),
                  "--web.listen-address=127.0.0.1:" + port)
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve("prometheus.log").toFile())
              .start();
      String api = "http://127.0.0.1:" + port;
      ActorTestKit kit = ActorTestKit.create();
      try {
        Process running = prometheus;
        kit.createTestProbe()
            .awaitAssert(
                Duration.ofSeconds(60),
                Duration.ofMillis(500),
                () -> {
                  assertThat(running.isAlive()).as(log(dir)).isTrue();
                  assertThat(LoopbackHttp.getOk(api + "/-/ready")).contains("Ready");
                  return null;
                });
        String first = cluster.ingressUrls().get(0);
        // A gap and its replay: the first tracker skips the batches of some traffic.
        LoopbackHttp.post(
            first + "/admin/debug/pause-events", LoopbackHttp.JSON.createObjectNode());
        traffic(cluster, options, 0);
        LoopbackHttp.post(
            first + "/admin/debug/resume-events", LoopbackHttp.JSON.createObjectNode());
        // A rejection.
        LoopbackHttp.post(
            first + "/v1/chat/completions",
            LoopbackHttp.JSON.createObjectNode().put("model", options.model()));
        int[] round = {1};
        kit.createTestProbe()
            .awaitAssert(
                Duration.ofSeconds(120),
                Duration.ofSeconds(2),
                () -> {
                  traffic(cluster, options, round[0]++);
                  // A digest mismatch: diverge one replica on the first tracker, then compare.
                  LoopbackHttp.post(
                      first + "/admin/debug/diverge?replica=sim-0",
                      LoopbackHttp.JSON.createObjectNode());
                  LoopbackHttp.getOk(first + "/admin/consistency");
                  Set<String> empty = new LinkedHashSet<>();
                  for (String expr : exprs) {
                    JsonNode r =
                        LoopbackHttp.JSON.readTree(
                            LoopbackHttp.getOk(
                                api
                                    + "/api/v1/query?query="
                                    + URLEncoder.encode(expr, StandardCharsets.UTF_8)));
                    assertThat(r.path("status").asText())
                        .as("%s: %s", expr, r)
                        .isEqualTo("success");
                    if (r.path("data").path("result").isEmpty()) {
                      empty.add(expr);
                    }
                  }
                  assertThat(empty).as("queries without data").isEmpty();
                  return null;
                });
      } finally {
        kit.shutdownTestKit();
      }
    } finally {
      if (prometheus != null) {
        prometheus.destroy();
        if (!prometheus.waitFor(20, TimeUnit.SECONDS)) {
          prometheus.destroyForcibly();
        }
      }
    }
  }

  /** A few chat requests through both ingresses, sharing a prefix per round. */
  private static void traffic(DemoCluster cluster, DemoOptions options, int round)
      throws Exception {
    String prefix = PseudoWords.words(round % 3, 150);
    for (int i = 0; i < 6; i++) {
      ObjectNode body =
          LoopbackHttp.JSON.createObjectNode().put("model", options.model()).put("max_tokens", 2);
      body.putArray("messages")
          .addObject()
          .put("role", "user")
          .put("content", prefix + " " + PseudoWords.words(100 * round + i, 20));
      assertThat(
              LoopbackHttp.post(cluster.ingressUrls().get(i % 2) + "/v1/chat/completions", body)
                  .statusCode())
          .isEqualTo(200);
    }
  }

  private static String targets(List<String> urls) {
    return urls.stream()
        .map(u -> "'" + URI.create(u).getAuthority() + "'")
        .collect(Collectors.joining(", "));
  }

  private static String log(Path dir) {
    try {
      return Files.readString(dir.resolve("prometheus.log"));
    } catch (Exception e) {
      return e.toString();
    }
  }
}

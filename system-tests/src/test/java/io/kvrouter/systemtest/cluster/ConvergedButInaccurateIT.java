package io.kvrouter.systemtest.cluster;

import static io.kvrouter.testing.LoopbackHttp.getJson;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.loadtest.bench.PseudoWords;
import io.kvrouter.testing.LoopbackHttp;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * Converged and accurate are two things: two ingresses whose trackers agree on a picture of a
 * replica that its engine does not hold (every tracker lost the replica's blocks while the engine
 * kept them, the state a replay answer taken for the next one left behind in issue 13) report the
 * replica converged and, within 20 requests, not accurate, on /admin/consistency and on the
 * per-replica gauges. Before, predicted entries made by the routing itself matched the engine's
 * reports for 30 s, and the accuracy window needed more than 20 disagreeing requests after a
 * history of agreement; then, with a window of 16, 9 disagreeing requests at each ingress (17 over
 * two at best: flagged after 17 on a loaded machine, still accurate after 20 in one CI run). With
 * the window of 8 it is 5 at each (9 over two). A healthy replica under the same traffic stays
 * accurate throughout.
 *
 * <p>The whole-suite runs that stayed accurate after 20 requests had run the loop inside the
 * warm-up's predicted entries: they live {@code predicted-confirm-grace} (2 s) past each prefill,
 * the warm-up's wait for their end read a gauge refreshed once a second and could see a zero from
 * before them, and a warm JVM sends the warm-up and all 20 requests within those 2 s (traced on 1
 * Dec: every loop request matched 70-74 blocks through 20 live runs of the warm-up's). The wait now
 * needs zero over more than one refresh.
 */
class ConvergedButInaccurateIT {

  private static final String REPLICA = "a-0";

  private static ObjectNode prompt(int i) {
    return LoopbackHttp.JSON
        .createObjectNode()
        .put("model", ClusterHarness.MODEL)
        .put("prompt", PseudoWords.words(31_000 + i, 400))
        .put("max_tokens", 1);
  }

  private static void send(ClusterHarness.Ingress ingress, int i) throws Exception {
    HttpResponse<String> r = LoopbackHttp.post(ingress.url() + "/v1/completions", prompt(i));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
  }

  @Test
  void
      trackersAgreeingOnAPictureTheEngineDoesNotHold_areConverged_andFlaggedInaccurateWithin20Requests()
          throws Exception {
    try (ClusterHarness cluster = new ClusterHarness(20)) {
      List<ClusterHarness.Ingress> ingresses = warmUp(cluster);
      ActorTestKit kit = ActorTestKit.create(ingresses.get(0).system());

      // Every tracker forgets the replica's blocks at the same watermark; the engine keeps them.
      for (ClusterHarness.Ingress i : ingresses) {
        HttpResponse<String> r =
            LoopbackHttp.post(i.url() + "/admin/debug/diverge?replica=" + REPLICA, "{}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      }
      JsonNode agreed = awaitReport(kit, cluster, r -> r.path("converged").asBoolean());
      assertThat(
              agreed.path("trackers").get(0).path("replicas").path(REPLICA).path("blocks").asLong())
          .isZero();

      int requests = 0;
      JsonNode report = agreed;
      List<String> trace = new ArrayList<>();
      while (report.path("per_replica").path(REPLICA).path("accurate").asBoolean()) {
        assertThat(requests)
            .as("flagged within 20 requests; per request: %s", trace)
            .isLessThan(20);
        ClusterHarness.Ingress via = ingresses.get(requests % 2);
        double predicted = LoopbackHttp.metric(via.url(), "kvrouter_predicted_cached_tokens_total");
        double reported = LoopbackHttp.metric(via.url(), "kvrouter_engine_cached_tokens_total");
        send(via, requests); // each cached prompt once more
        requests++;
        report = getJson(ingresses.get(0).url() + "/admin/consistency");
        trace.add(describe(requests, via, predicted, reported, report));
      }
      System.out.printf(
          "replica %s flagged inaccurate after %d requests; converged: %s%n",
          REPLICA, requests, report.path("converged").asBoolean());
      assertThat(report.path("per_replica").path(REPLICA).path("converged").asBoolean())
          .as(report.toPrettyString())
          .isTrue();
      // The whole view also covers each ingress's reservation ledger, and the last request's
      // reservation may still be on its way to the other ingress (one CI run: origin lagging by 2
      // sequence numbers in the report taken right after it). Once it lands the view is
      // converged, and the replica is still flagged: no request has come since.
      report = awaitReport(kit, cluster, r -> r.path("converged").asBoolean());
      assertThat(report.path("accurate").asBoolean()).as(report.toPrettyString()).isFalse();
      JsonNode cell = report.path("per_replica").path(REPLICA);
      assertThat(cell.path("converged").asBoolean()).isTrue();
      assertThat(cell.path("accurate").asBoolean()).isFalse();
      assertThat(cell.path("alerting_on").size()).isPositive();
      for (ClusterHarness.Ingress i : ingresses) {
        JsonNode seen = getJson(i.url() + "/admin/consistency");
        assertThat(seen.path("per_replica").path(REPLICA).path("accurate").asBoolean())
            .as("every ingress reports it")
            .isFalse();
        // The view just gathered set this ingress's per-replica gauges.
        assertThat(LoopbackHttp.metric(i.url(), "kvrouter_replica_converged")).isEqualTo(1.0);
        assertThat(LoopbackHttp.metric(i.url(), "kvrouter_replica_accurate")).isZero();
      }
    }
  }

  /**
   * The same traffic on a replica whose trackers hold what its engine holds: every cached prompt
   * once more, and the replica stays accurate (and converged) on every report in between, so the
   * flag above is the divergence's and not the traffic's.
   */
  @Test
  void aHealthyReplica_underTheSameTraffic_staysAccurateAndConverged() throws Exception {
    try (ClusterHarness cluster = new ClusterHarness(20)) {
      List<ClusterHarness.Ingress> ingresses = warmUp(cluster);
      ActorTestKit kit = ActorTestKit.create(ingresses.get(0).system());
      for (int requests = 0; requests < 20; requests++) {
        send(ingresses.get(requests % 2), requests);
        JsonNode report = getJson(ingresses.get(0).url() + "/admin/consistency");
        JsonNode cell = report.path("per_replica").path(REPLICA);
        assertThat(cell.path("accurate").asBoolean())
            .as("after %d requests: %s", requests + 1, report.toPrettyString())
            .isTrue();
        assertThat(cell.path("alerting_on").size()).isZero();
      }
      JsonNode end = awaitReport(kit, cluster, r -> r.path("converged").asBoolean());
      assertThat(end.path("accurate").asBoolean()).as(end.toPrettyString()).isTrue();
    }
  }

  /**
   * Two ingresses with debug endpoints and one replica; twenty long prompts, each twice through
   * alternating ingresses (first uncached, then cached: predicted and reported alike); returns once
   * the view is converged and accurate and no predicted entry of the routing's is left.
   */
  private static List<ClusterHarness.Ingress> warmUp(ClusterHarness cluster) throws Exception {
    var debug = ConfigFactory.parseString("kvrouter.ingress.debug-endpoints = on");
    cluster.addIngress(debug);
    cluster.addIngress(debug);
    cluster.startAgent("a", 1);
    List<ClusterHarness.Ingress> ingresses = cluster.ingresses();
    ActorTestKit kit = ActorTestKit.create(ingresses.get(0).system());
    cluster.awaitReady(kit, 1);
    for (int i = 0; i < 20; i++) {
      send(ingresses.get(0), i);
      send(ingresses.get(1), i);
    }
    JsonNode before = awaitReport(kit, cluster, r -> r.path("converged").asBoolean());
    assertThat(before.path("per_replica").path(REPLICA).path("accurate").asBoolean())
        .as(before.toPrettyString())
        .isTrue();
    // The routing's own predicted entries end predicted-confirm-grace after each request's
    // prefill. The gauge is a copy the ingress refreshes every gauge-interval, so a zero read just
    // after the requests may predate them: then the flag loop ran inside the grace, every
    // prediction matched through the warm-up's entries and nothing was flagged after 20 requests
    // (the failures of whole-suite runs, where a warm JVM sends the 40 requests in about a second).
    // Zero on every read over more than one refresh is a zero the tracker reported.
    long refresh =
        ConfigFactory.load().getDuration("kvrouter.ingress.node.gauge-interval").toNanos();
    long[] zeroSince = {Long.MIN_VALUE};
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(30),
            Duration.ofMillis(200),
            () -> {
              double runs = 0;
              for (ClusterHarness.Ingress i : ingresses) {
                runs += LoopbackHttp.metric(i.url(), "kvrouter_predicted_runs");
              }
              long now = System.nanoTime();
              if (runs > 0) {
                zeroSince[0] = Long.MIN_VALUE;
              } else if (zeroSince[0] == Long.MIN_VALUE) {
                zeroSince[0] = now;
              }
              assertThat(runs).isZero();
              assertThat(now - zeroSince[0])
                  .as("zero on reads spanning more than one gauge refresh")
                  .isGreaterThan(refresh + Duration.ofMillis(250).toNanos());
              return null;
            });
    return ingresses;
  }

  /**
   * One request of the flag test, for its failure message: what the tracker predicted and the
   * engine reported for it, what each tracker holds of the replica, and whether anything (a
   * snapshot, a replay) could have healed the divergence.
   */
  private static String describe(
      int request, ClusterHarness.Ingress via, double predicted, double reported, JsonNode report)
      throws Exception {
    return String.format(
        "%n#%d: predicted +%.0f, reported +%.0f; %s blocks per tracker %s; snapshots %.0f, gaps"
            + " %.0f, replays %.0f; %s",
        request,
        LoopbackHttp.metric(via.url(), "kvrouter_predicted_cached_tokens_total") - predicted,
        LoopbackHttp.metric(via.url(), "kvrouter_engine_cached_tokens_total") - reported,
        REPLICA,
        report.path("trackers").findValues(REPLICA).stream()
            .map(n -> n.path("blocks").asText())
            .toList(),
        LoopbackHttp.metric(via.url(), "kvrouter_snapshots_total"),
        LoopbackHttp.metric(via.url(), "kvrouter_event_gaps_total"),
        LoopbackHttp.metric(via.url(), "kvrouter_replays_total"),
        report.path("per_replica").path(REPLICA));
  }

  private static JsonNode awaitReport(
      ActorTestKit kit, ClusterHarness cluster, java.util.function.Predicate<JsonNode> holds) {
    JsonNode[] last = {null};
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(45),
            Duration.ofMillis(200),
            () -> {
              last[0] = getJson(cluster.ingresses().get(0).url() + "/admin/consistency");
              assertThat(holds.test(last[0])).as(last[0].toPrettyString()).isTrue();
              return null;
            });
    return last[0];
  }
}

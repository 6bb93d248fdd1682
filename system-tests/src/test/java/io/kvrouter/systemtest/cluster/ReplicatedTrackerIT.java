package io.kvrouter.systemtest.cluster;

import static io.kvrouter.testing.LoopbackHttp.getJson;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.loadtest.bench.PseudoWords;
import io.kvrouter.testing.LoopbackHttp;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.Test;

/**
 * The replicated tracker under faults: three ingress nodes and two agent nodes in one JVM, with a
 * share of the KV event batches and reservation events dropped, duplicated and reordered on their
 * way into every tracker. After a workload every tracker must report the same watermarks and
 * digests (/admin/consistency converged); again after a tracker joins late and after an agent
 * restarts (new epoch).
 */
class ReplicatedTrackerIT {

  static final Config FAULTS =
      ConfigFactory.parseString(
          "kvrouter.tracker.fault-injection { drop = 0.15, duplicate = 0.15, reorder = 0.15, seed = 7 }");

  /** Sends {@code n} completions, spread over every ingress, all at once; all must succeed. */
  static void workload(ClusterHarness cluster, int n, long seed) throws Exception {
    List<CompletableFuture<HttpResponse<String>>> pending = new ArrayList<>();
    List<ClusterHarness.Ingress> ingresses = cluster.ingresses();
    for (int i = 0; i < n; i++) {
      // Ten shared prefixes, so trackers index shared blocks and reservations chain on them.
      String prompt =
          PseudoWords.words(seed + i % 10, 200) + " " + PseudoWords.words(seed * 1000 + i, 40);
      String body =
          "{\"model\":\""
              + ClusterHarness.MODEL
              + "\",\"prompt\":\""
              + prompt
              + "\",\"max_tokens\":8}";
      pending.add(
          LoopbackHttp.CLIENT.sendAsync(
              HttpRequest.newBuilder(
                      URI.create(ingresses.get(i % ingresses.size()).url() + "/v1/completions"))
                  .timeout(Duration.ofSeconds(60))
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString(body))
                  .build(),
              HttpResponse.BodyHandlers.ofString()));
    }
    for (CompletableFuture<HttpResponse<String>> f : pending) {
      assertThat(f.get().statusCode()).as(f.get().body()).isEqualTo(200);
    }
  }

  static JsonNode awaitConverged(ActorTestKit kit, ClusterHarness cluster, int trackers) {
    JsonNode[] last = {null};
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(45),
            Duration.ofMillis(300),
            () -> {
              JsonNode view = getJson(cluster.ingresses().get(0).url() + "/admin/consistency");
              last[0] = view;
              assertThat(view.path("trackers").size()).isEqualTo(trackers);
              assertThat(view.path("converged").asBoolean()).as(view.toPrettyString()).isTrue();
              return null;
            });
    JsonNode view = last[0];
    // Converged means: for every replica and origin, identical watermark and digest everywhere.
    for (String replica : iterable(view.path("replicas"))) {
      JsonNode first = view.path("trackers").get(0).path("replicas").path(replica);
      for (JsonNode t : view.path("trackers")) {
        JsonNode cell = t.path("replicas").path(replica);
        assertThat(cell.path("digest")).isEqualTo(first.path("digest"));
        assertThat(cell.path("seq")).isEqualTo(first.path("seq"));
        assertThat(cell.path("state").asText()).isEqualTo("converged");
      }
    }
    return view;
  }

  static List<String> iterable(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }

  static double metricSum(ClusterHarness cluster, String name) throws Exception {
    double sum = 0;
    for (ClusterHarness.Ingress i : cluster.ingresses()) {
      sum += LoopbackHttp.metric(i.url(), name);
    }
    return sum;
  }

  @Test
  void
      droppedDuplicatedAndReorderedMessages_trackersStillConverge_alsoWithALateTrackerAndARestartedAgent()
          throws Exception {
    try (ClusterHarness cluster = new ClusterHarness(20)) {
      for (int i = 0; i < 3; i++) {
        cluster.addIngress(FAULTS);
      }
      cluster.startAgent("a", 2);
      cluster.startAgent("b", 2);
      ActorTestKit kit = ActorTestKit.create(cluster.ingresses().get(0).system());
      cluster.awaitReady(kit, 4);

      workload(cluster, 60, 1);
      JsonNode view = awaitConverged(kit, cluster, 3);
      long blocks = 0;
      for (JsonNode cell : view.path("trackers").get(0).path("replicas")) {
        blocks += cell.path("blocks").asLong();
      }
      assertThat(blocks).as("the trackers indexed something").isPositive();
      assertThat(metricSum(cluster, "kvrouter_event_gaps_total"))
          .as("faults were injected and repaired")
          .isPositive();

      // A tracker that starts while the others run bootstraps and converges.
      cluster.addIngress(FAULTS);
      cluster.awaitReady(kit, 4);
      workload(cluster, 40, 2);
      awaitConverged(kit, cluster, 4);

      // An agent restart starts a new epoch; every tracker clears and follows it.
      long epochBefore =
          view.path("trackers").get(0).path("replicas").path("a-0").path("epoch").asLong();
      cluster.stopAgent("a");
      cluster.startAgent("a", 2);
      kit.createTestProbe()
          .awaitAssert(
              Duration.ofSeconds(30),
              Duration.ofMillis(200),
              () -> {
                JsonNode v = getJson(cluster.ingresses().get(0).url() + "/admin/consistency");
                for (JsonNode t : v.path("trackers")) {
                  assertThat(t.path("replicas").path("a-0").path("epoch").asLong())
                      .isGreaterThan(epochBefore);
                }
                return null;
              });
      cluster.awaitReady(kit, 4);
      workload(cluster, 40, 3);
      JsonNode after = awaitConverged(kit, cluster, 4);
      assertThat(after.path("trackers").get(0).path("replicas").path("a-0").path("epoch").asLong())
          .isGreaterThan(epochBefore);
    }
  }

  /**
   * A rolling upgrade's mixed cluster: ingresses sending their reservations in the full form (as
   * 0.1.0 does, and as {@code reservation-wire = legacy} does) beside one on the compact wire. Each
   * reads both, so under the same faults every tracker applies every origin's stream to its end.
   */
  @Test
  void fullAndCompactReservationWires_inOneCluster_everyTrackerFollowsEveryOrigin()
      throws Exception {
    Config full =
        ConfigFactory.parseString("kvrouter.tracker.reservation-wire = legacy")
            .withFallback(FAULTS);
    try (ClusterHarness cluster = new ClusterHarness(20)) {
      cluster.addIngress(full);
      cluster.addIngress(FAULTS);
      cluster.addIngress(full);
      cluster.startAgent("a", 2);
      ActorTestKit kit = ActorTestKit.create(cluster.ingresses().get(0).system());
      cluster.awaitReady(kit, 2);

      workload(cluster, 60, 4);
      JsonNode view = awaitConverged(kit, cluster, 3);
      assertThat(iterable(view.path("origins"))).hasSize(3);
      for (String origin : iterable(view.path("origins"))) {
        JsonNode first = view.path("trackers").get(0).path("origins").path(origin);
        assertThat(first.path("seq").asLong()).as("%s made reservations", origin).isPositive();
        for (JsonNode t : view.path("trackers")) {
          assertThat(t.path("origins").path(origin).path("seq"))
              .as("%s's stream on %s", origin, t.path("ingress").asText())
              .isEqualTo(first.path("seq"));
        }
      }
    }
  }

  @Test
  void abruptlyStoppedIngress_itsReservationsVanishFromTheOthers() throws Exception {
    try (ClusterHarness cluster = new ClusterHarness(1)) {
      ClusterHarness.Ingress survivor = cluster.addIngress(ConfigFactory.empty());
      cluster.addIngress(ConfigFactory.empty());
      // The victim dies without leaving: no coordinated shutdown, as after a crash.
      ClusterHarness.Ingress victim =
          cluster.addIngress(
              ConfigFactory.parseString(
                  "pekko.coordinated-shutdown.run-by-actor-system-terminate = off"));
      cluster.startAgent("a", 2);
      ActorTestKit kit = ActorTestKit.create(survivor.system());
      cluster.awaitReady(kit, 2);

      for (int i = 0; i < 4; i++) {
        String body =
            "{\"model\":\""
                + ClusterHarness.MODEL
                + "\",\"prompt\":\"long "
                + i
                + "\",\"max_tokens\":20000}";
        LoopbackHttp.CLIENT.sendAsync(
            HttpRequest.newBuilder(URI.create(victim.url() + "/v1/completions"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.discarding());
      }
      TestProbe<Object> probe = kit.createTestProbe();
      probe.awaitAssert(
          Duration.ofSeconds(20),
          Duration.ofMillis(100),
          () -> {
            assertThat(inFlight(survivor.url()))
                .as("the victim's reservations reached the survivor")
                .isEqualTo(4);
            return null;
          });

      victim.system().terminate();
      long stopped = System.nanoTime();
      probe.awaitAssert(
          Duration.ofSeconds(30),
          Duration.ofMillis(100),
          () -> {
            assertThat(inFlight(survivor.url())).isZero();
            return null;
          });
      System.out.printf(
          "reservations of a crashed ingress gone from the survivor after %.1f s%n",
          (System.nanoTime() - stopped) / 1e9);
    }
  }

  @Test
  void removedReplica_getsNoFurtherRequests() throws Exception {
    try (ClusterHarness cluster = new ClusterHarness(20)) {
      ClusterHarness.Ingress ingress = cluster.addIngress(ConfigFactory.empty());
      cluster.startAgent("a", 2);
      cluster.startAgent("b", 2);
      ActorTestKit kit = ActorTestKit.create(ingress.system());
      cluster.awaitReady(kit, 4);
      workload(cluster, 16, 5);

      cluster.stopAgent("b");
      kit.createTestProbe()
          .awaitAssert(
              Duration.ofSeconds(30),
              Duration.ofMillis(200),
              () -> {
                assertThat(getJson(ingress.url() + "/admin/replicas").findValuesAsText("replica"))
                    .containsExactlyInAnyOrder("a-0", "a-1");
                return null;
              });
      double[] before = served(cluster.agent("b"));
      workload(cluster, 24, 6);
      assertThat(served(cluster.agent("b")))
          .as("b's engines got nothing more")
          .containsExactly(before);
    }
  }

  private static int inFlight(String url) throws Exception {
    int sum = 0;
    for (JsonNode r : getJson(url + "/admin/replicas")) {
      sum += r.path("in_flight").asInt();
    }
    return sum;
  }

  /** Prompt tokens each engine of the agent was asked for (vllm:prefix_cache_queries_total). */
  private static double[] served(ClusterHarness.Agent agent) throws Exception {
    double[] out = new double[agent.fleet().engines().size()];
    for (int i = 0; i < out.length; i++) {
      out[i] =
          LoopbackHttp.metric(
              agent.fleet().engines().get(i).baseUrl(), "vllm:prefix_cache_queries_total");
    }
    return out;
  }
}

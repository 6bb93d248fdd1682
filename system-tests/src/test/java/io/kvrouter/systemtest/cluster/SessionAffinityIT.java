package io.kvrouter.systemtest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.loadtest.bench.PseudoWords;
import io.kvrouter.testing.LoopbackHttp;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Session affinity through two ingresses and three simulated engines. Every turn of a conversation
 * here has a prompt unrelated to the others, so nothing in the prefix cache could explain where it
 * goes: only the session binding, replicated between the ingresses, keeps it on its replica. Which
 * engine served a request is read from the engines' own logs. Replicas are busy at 2 reservations
 * ({@code kvrouter.tracker.busy.max-in-flight}), so two long requests overload one.
 */
class SessionAffinityIT {

  static TrafficCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster =
        TrafficCluster.start(
            "kvrouter.tracker.busy.max-in-flight = 2\n"
                + "kvrouter.ingress.queue { capacity = 16, max-wait = 60s }",
            3,
            1);
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  static int turn = 0;

  /** Sends one turn (a fresh prompt) and returns the engine that served it. */
  static int turn(int ingress, String session) throws Exception {
    long[] before = cluster.servedByEach();
    Map<String, String> headers = session == null ? Map.of() : Map.of("X-Session-ID", session);
    HttpResponse<String> r =
        cluster.send(
            ingress, TrafficCluster.chat(PseudoWords.words(9_000 + turn++, 40), 4, false), headers);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return TrafficCluster.servedBy(before, cluster.servedByEach());
  }

  /** Waits until ingress {@code i} sees {@code session} bound to engine {@code engine}. */
  static void awaitBinding(int ingress, String session, int engine) {
    String url =
        cluster.url(ingress)
            + "/admin/sessions?model="
            + ClusterHarness.MODEL
            + "&session="
            + URLEncoder.encode(session, StandardCharsets.UTF_8);
    cluster.await(
        Duration.ofSeconds(10),
        () -> {
          assertThat(LoopbackHttp.getJson(url).path("replica").asText()).isEqualTo("sim-" + engine);
          return null;
        });
  }

  @Test
  void withoutASession_freshPromptsSpreadOverTheReplicas() throws Exception {
    Set<Integer> used = new HashSet<>();
    for (int i = 0; i < 10; i++) {
      used.add(turn(i % 2, null));
    }
    assertThat(used).as("near-ties are broken at random").hasSizeGreaterThan(1);
  }

  @Test
  void aSessionKeepsItsReplica_turnAfterTurn_acrossIngresses() throws Exception {
    int home = turn(0, "conv-keep");
    for (int i = 1; i <= 8; i++) {
      awaitBinding(i % 2, "conv-keep", home);
      assertThat(turn(i % 2, "conv-keep"))
          .as("turn %d through ingress %d", i, i % 2)
          .isEqualTo(home);
    }
  }

  @Test
  void withItsReplicaOverloaded_theSessionMoves_andItsBindingFollows() throws Exception {
    int home = turn(0, "conv-move");
    awaitBinding(1, "conv-move", home);
    // Two long requests of the same session fill its replica up to max-in-flight: busy.
    long before = cluster.served(home);
    CompletableFuture<?> long1 =
        cluster.sendAsync(
            1,
            TrafficCluster.chat(PseudoWords.words(8_001, 30), 3000, true),
            Map.of("X-Session-ID", "conv-move"));
    CompletableFuture<?> long2 =
        cluster.sendAsync(
            0,
            TrafficCluster.chat(PseudoWords.words(8_002, 30), 3000, true),
            Map.of("X-Session-ID", "conv-move"));
    cluster.await(
        Duration.ofSeconds(30),
        () -> {
          assertThat(cluster.served(home) - before)
              .as("both long requests on its replica")
              .isEqualTo(2);
          return null;
        });

    int moved = turn(1, "conv-move");
    assertThat(moved).as("its replica is over the busy threshold").isNotEqualTo(home);
    awaitBinding(0, "conv-move", moved);
    awaitBinding(1, "conv-move", moved);
    assertThat(turn(0, "conv-move")).as("the session stays where it moved").isEqualTo(moved);
    long1.cancel(true);
    long2.cancel(true);
  }
}

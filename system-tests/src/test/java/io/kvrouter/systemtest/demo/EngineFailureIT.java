package io.kvrouter.systemtest.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.cli.dev.DemoCluster;
import io.kvrouter.cli.dev.DemoOptions;
import io.kvrouter.testing.LoopbackHttp;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * A simulated engine dies while it is serving: every request it had not answered is retried on
 * another replica and succeeds, and no reservation is left behind anywhere.
 */
class EngineFailureIT {

  @Test
  void killedEngine_unansweredRequestsRetriedElsewhere_andNoReservationLeftBehind()
      throws Exception {
    DemoOptions options = DemoOptions.defaults().onFreePorts();
    try (DemoCluster cluster = DemoCluster.start(options)) {
      cluster.awaitReady(Duration.ofSeconds(60));
      ActorTestKit kit = ActorTestKit.create(cluster.agentNode());
      List<CompletableFuture<HttpResponse<String>>> pending = new ArrayList<>();
      for (int i = 0; i < 24; i++) {
        ObjectNode body = LoopbackHttp.JSON.createObjectNode();
        body.put("model", options.model());
        body.put("prompt", DemoClient.words(1000 + i, 300));
        body.put("max_tokens", 300);
        String ingress = cluster.ingressUrls().get(i % 2);
        pending.add(
            LoopbackHttp.CLIENT.sendAsync(
                HttpRequest.newBuilder(URI.create(ingress + "/v1/completions"))
                    .timeout(Duration.ofSeconds(120))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body.toString()))
                    .build(),
                HttpResponse.BodyHandlers.ofString()));
      }
      // Kill sim-0 once it is serving some of them.
      kit.createTestProbe()
          .awaitAssert(
              Duration.ofSeconds(30),
              Duration.ofMillis(50),
              () -> {
                assertThat(inFlight(cluster.ingressUrls().get(0), "sim-0")).isPositive();
                return null;
              });
      cluster.fleet().engines().get(0).close();

      for (CompletableFuture<HttpResponse<String>> f : pending) {
        HttpResponse<String> r = f.get();
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(
                LoopbackHttp.JSON
                    .readTree(r.body())
                    .path("usage")
                    .path("completion_tokens")
                    .asInt())
            .isEqualTo(300);
      }
      double retries = 0;
      for (String ingress : cluster.ingressUrls()) {
        retries += LoopbackHttp.metric(ingress, "kvrouter_retries_total");
      }
      assertThat(retries).as("requests were retried").isPositive();

      kit.createTestProbe()
          .awaitAssert(
              Duration.ofSeconds(30),
              () -> {
                for (String ingress : cluster.ingressUrls()) {
                  for (JsonNode replica : LoopbackHttp.getJson(ingress + "/admin/replicas")) {
                    assertThat(replica.path("in_flight").asInt()).as(replica.toString()).isZero();
                  }
                }
                return null;
              });
      // The dead replica is deregistered by its agent and leaves every ingress's candidates.
      kit.createTestProbe()
          .awaitAssert(
              Duration.ofSeconds(30),
              () -> {
                for (String ingress : cluster.ingressUrls()) {
                  assertThat(
                          LoopbackHttp.getJson(ingress + "/admin/replicas")
                              .findValuesAsText("replica"))
                      .doesNotContain("sim-0")
                      .hasSize(3);
                }
                return null;
              });
    }
  }

  private static int inFlight(String ingress, String replica) throws Exception {
    for (JsonNode r : LoopbackHttp.getJson(ingress + "/admin/replicas")) {
      if (replica.equals(r.path("replica").asText())) {
        return r.path("in_flight").asInt();
      }
    }
    return 0;
  }
}

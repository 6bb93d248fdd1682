package io.kvrouter.systemtest.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.cli.dev.DemoCluster;
import io.kvrouter.cli.dev.DemoOptions;
import io.kvrouter.loadtest.bench.EngineSnapshot;
import io.kvrouter.protocol.keys.SpeculativeDecoding;
import io.kvrouter.testing.LoopbackHttp;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Speculative decoding end to end, over real HTTP (one ingress, two simulated vLLM engines running
 * EAGLE: hashes and events as without it, the last matched block of every hit recomputed), with
 * {@code kvrouter.models."kvrouter-demo".speculative-method = eagle} in the agent's and ingress's
 * configuration: the agent's alignment probe accepts the engines, a repeated prompt goes back to
 * the engine that holds it and hits there, and the router predicts exactly the cached tokens the
 * engine reports.
 */
class SpeculativeDecodingIT {

  @Test
  void eagleEngines_withTheSettingRight_serveRepeatedPromptsFromCache_asPredicted()
      throws Exception {
    DemoOptions base = DemoClient.kvrouterCluster(2);
    DemoOptions options =
        new DemoOptions(
            base.ingresses(),
            base.ingressPort(),
            base.host(),
            base.engines(),
            base.enginePort(),
            base.kvEventsPort(),
            base.model(),
            base.policy(),
            base.engine().withNumBlocks(1024).withSpeculativeMethod("eagle"));
    // As a system property (no quoting there): kvrouter.models."kvrouter-demo".speculative-method
    String key = "kvrouter.models." + options.model() + "." + SpeculativeDecoding.KEY;
    System.setProperty(key, "eagle");
    ConfigFactory.invalidateCaches();
    try (DemoCluster cluster = DemoCluster.start(options)) {
      cluster.awaitReady(Duration.ofSeconds(60));
      String ingress = cluster.ingressUrls().get(0);
      for (JsonNode r : LoopbackHttp.getJson(ingress + "/admin/replicas")) {
        assertThat(r.path("alignment").path("state").asText())
            .as(r.toString())
            .isEqualTo("aligned");
        assertThat(r.path("engine").path("speculative_method").asText()).isEqualTo("eagle");
      }
      ArrayNode messages = LoopbackHttp.JSON.createArrayNode();
      messages.add(DemoClient.message("system", DemoClient.words(11, 400)));
      messages.add(DemoClient.message("user", DemoClient.words(12, 50)));

      List<EngineSnapshot> s0 = DemoClient.engineCounters(cluster);
      send(ingress, options.model(), messages);
      int first = DemoClient.servedBy(s0, DemoClient.engineCounters(cluster));
      List<EngineSnapshot> s1 = DemoClient.engineCounters(cluster);
      double p0 = DemoClient.predictedCachedTokens(ingress);
      int cached = send(ingress, options.model(), messages);
      double predicted = DemoClient.predictedCachedTokens(ingress) - p0;
      int second = DemoClient.servedBy(s1, DemoClient.engineCounters(cluster));

      System.out.printf(
          "speculative (eagle): first on engine %d, repeat on %d, predicted %.0f cached tokens,"
              + " engine reports %d%n",
          first, second, predicted, cached);
      assertThat(second).as("the repeat goes where the prompt is cached").isEqualTo(first);
      assertThat(cached).as("the EAGLE engine still hits").isGreaterThan(300);
      assertThat(predicted).as("predicted as the engine reuses").isEqualTo(cached);
    } finally {
      System.clearProperty(key);
      ConfigFactory.invalidateCaches();
    }
  }

  /** Sends the conversation; returns the engine's cached tokens. */
  private static int send(String ingress, String model, ArrayNode messages) throws Exception {
    DemoClient.awaitConverged(ingress);
    HttpResponse<String> r =
        LoopbackHttp.post(ingress + "/v1/chat/completions", DemoClient.chat(model, messages, 2));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    JsonNode usage = LoopbackHttp.JSON.readTree(r.body()).path("usage");
    return usage.path("prompt_tokens_details").path("cached_tokens").asInt();
  }
}

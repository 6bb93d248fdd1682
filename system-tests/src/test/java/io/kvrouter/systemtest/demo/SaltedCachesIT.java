package io.kvrouter.systemtest.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.cli.dev.DemoCluster;
import io.kvrouter.cli.dev.DemoOptions;
import io.kvrouter.testing.LoopbackHttp;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * {@code cache_salt} through the whole path, over real HTTP (one ingress, two simulated vLLM
 * engines, the kvrouter policy): the engine hashes the salt into a prompt's first block and
 * publishes it in its events' {@code extra_keys}; the agent keys the blocks with it and the ingress
 * keys the request with it. A prompt repeated under its own salt is predicted cached and hits the
 * engine's cache; the same prompt under another salt, or none, is predicted uncached (the router
 * never credits it with another tenant's blocks) and the engine computes it afresh.
 */
class SaltedCachesIT {

  /** Sends the prompt with {@code salt} (none when null); returns the engine's cached tokens. */
  private static int send(String ingress, String model, ArrayNode messages, String salt)
      throws Exception {
    DemoClient.awaitConverged(ingress);
    ObjectNode body = DemoClient.chat(model, messages, 2);
    if (salt != null) {
      body.put("cache_salt", salt);
    }
    HttpResponse<String> r = LoopbackHttp.post(ingress + "/v1/chat/completions", body);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    JsonNode usage = LoopbackHttp.JSON.readTree(r.body()).path("usage");
    return usage.path("prompt_tokens_details").path("cached_tokens").asInt();
  }

  @Test
  void aSaltedPrompt_hitsOnlyItsOwnSaltsBlocks_inTheRoutersPredictionAndInTheEngine()
      throws Exception {
    DemoOptions options = DemoClient.kvrouterCluster(2);
    try (DemoCluster cluster = DemoCluster.start(options)) {
      cluster.awaitReady(Duration.ofSeconds(60));
      String ingress = cluster.ingressUrls().get(0);
      ArrayNode messages = LoopbackHttp.JSON.createArrayNode();
      messages.add(DemoClient.message("system", DemoClient.words(7, 400)));
      messages.add(DemoClient.message("user", DemoClient.words(8, 50)));

      send(ingress, options.model(), messages, "tenant-a");
      double p0 = DemoClient.predictedCachedTokens(ingress);
      int again = send(ingress, options.model(), messages, "tenant-a");
      double p1 = DemoClient.predictedCachedTokens(ingress);
      int otherSalt = send(ingress, options.model(), messages, "tenant-b");
      double p2 = DemoClient.predictedCachedTokens(ingress);
      int unsalted = send(ingress, options.model(), messages, null);
      double p3 = DemoClient.predictedCachedTokens(ingress);

      System.out.printf(
          "salted caches: same salt predicted %.0f, engine %d cached; other salt predicted %.0f,"
              + " engine %d; unsalted predicted %.0f, engine %d%n",
          p1 - p0, again, p2 - p1, otherSalt, p3 - p2, unsalted);
      assertThat(again).as("the engine's hit under the same salt").isGreaterThan(300);
      assertThat(p1 - p0).as("predicted under the same salt").isGreaterThan(300);
      assertThat(otherSalt).as("the engine's hit under another salt").isZero();
      assertThat(p2 - p1).as("predicted under another salt").isZero();
      assertThat(unsalted).as("the engine's hit without a salt").isZero();
      assertThat(p3 - p2).as("predicted without a salt").isZero();
    }
  }
}

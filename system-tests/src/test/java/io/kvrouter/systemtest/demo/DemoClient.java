package io.kvrouter.systemtest.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.cli.dev.DemoCluster;
import io.kvrouter.cli.dev.DemoOptions;
import io.kvrouter.loadtest.bench.EngineMetricsScraper;
import io.kvrouter.loadtest.bench.EngineSnapshot;
import io.kvrouter.loadtest.bench.PseudoWords;
import io.kvrouter.testing.LoopbackHttp;
import java.net.URI;
import java.time.Duration;
import java.util.List;

/** Request bodies and engine counters for driving a {@link DemoCluster} in tests. */
final class DemoClient {

  private DemoClient() {}

  /**
   * One ingress and {@code engines} simulated engines on free ports, routed by the kvrouter policy,
   * engines 20 times faster than the timing model.
   */
  static DemoOptions kvrouterCluster(int engines) {
    return DemoOptions.defaults()
        .onFreePorts()
        .withCounts(1, engines)
        .withPolicy("kvrouter")
        .withSpeedup(20);
  }

  /** A chat body for a conversation so far. */
  static ObjectNode chat(String model, ArrayNode messages, int maxTokens) {
    ObjectNode body = LoopbackHttp.JSON.createObjectNode();
    body.put("model", model);
    body.set("messages", messages.deepCopy());
    body.put("max_tokens", maxTokens);
    return body;
  }

  static ObjectNode message(String role, String content) {
    return LoopbackHttp.JSON.createObjectNode().put("role", role).put("content", content);
  }

  static String words(long seed, int count) {
    return PseudoWords.words(seed, count);
  }

  /**
   * Waits until {@code ingressUrl}'s consistency view says every tracker has applied every stream
   * (replicas' KV events and peers' reservations) to its newest watermark with equal digests.
   */
  static void awaitConverged(String ingressUrl) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    JsonNode view = LoopbackHttp.getJson(ingressUrl + "/admin/consistency");
    while (!view.path("converged").asBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("trackers not converged after 30 s: " + view.toPrettyString());
      }
      Thread.sleep(50); // polling the consistency view, bounded by the deadline
      view = LoopbackHttp.getJson(ingressUrl + "/admin/consistency");
    }
  }

  /** Prefix-cache queries and hits of every engine, in engine order. */
  static List<EngineSnapshot> engineCounters(DemoCluster cluster) throws InterruptedException {
    EngineMetricsScraper scraper =
        new EngineMetricsScraper(LoopbackHttp.CLIENT, Duration.ofSeconds(5));
    return scraper.scrapeAll(cluster.engineUrls().stream().map(URI::create).toList());
  }

  private static final java.util.regex.Pattern PREDICTED =
      java.util.regex.Pattern.compile(
          "(?m)^kvrouter_predicted_cached_tokens_total(?:\\{[^}]*\\})? (\\S+)$");

  /** The ingress's {@code kvrouter_predicted_cached_tokens_total}, summed over its series. */
  static double predictedCachedTokens(String ingressUrl) throws Exception {
    java.util.regex.Matcher m = PREDICTED.matcher(LoopbackHttp.getOk(ingressUrl + "/metrics"));
    double sum = 0;
    while (m.find()) {
      sum += Double.parseDouble(m.group(1));
    }
    return sum;
  }

  /** The index of the one engine whose prefix-cache queries grew between two scrapes. */
  static int servedBy(List<EngineSnapshot> before, List<EngineSnapshot> after) {
    int served = -1;
    for (int i = 0; i < after.size(); i++) {
      if (after.get(i).queries() > before.get(i).queries()) {
        assertThat(served).as("one engine served the request").isEqualTo(-1);
        served = i;
      }
    }
    assertThat(served).isNotNegative();
    return served;
  }
}

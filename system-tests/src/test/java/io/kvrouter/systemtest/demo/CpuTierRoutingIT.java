package io.kvrouter.systemtest.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.kvrouter.cli.dev.DemoCluster;
import io.kvrouter.cli.dev.DemoOptions;
import io.kvrouter.loadtest.bench.EngineSnapshot;
import io.kvrouter.sim.MockerTimingModel;
import io.kvrouter.sim.SimEngineConfig;
import io.kvrouter.testing.LoopbackHttp;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The CPU tier end to end, over real HTTP (one ingress, two simulated vLLM engines with 128 GPU
 * blocks and a 4,096-block CPU offload tier, the kvrouter policy): a prompt whose blocks its
 * replica evicted from GPU but still holds on CPU is routed back to that replica, which loads the
 * blocks back instead of computing them and reports them cached.
 */
class CpuTierRoutingIT {

  private static final Pattern LOADED =
      Pattern.compile("(?m)^sim:cpu_tier_loaded_blocks_total(?:\\{[^}]*\\})? (\\S+)$");

  private static double loaded(String engine) throws Exception {
    Matcher m = LOADED.matcher(LoopbackHttp.getOk(engine + "/metrics"));
    assertThat(m.find()).isTrue();
    return Double.parseDouble(m.group(1));
  }

  private static ArrayNode prompt(long seed) {
    ArrayNode messages = LoopbackHttp.JSON.createArrayNode();
    messages.add(DemoClient.message("system", DemoClient.words(seed, 400)));
    messages.add(DemoClient.message("user", DemoClient.words(seed + 1, 20)));
    return messages;
  }

  private static JsonNode post(String url, String model, ArrayNode messages) throws Exception {
    HttpResponse<String> r =
        LoopbackHttp.post(url + "/v1/chat/completions", DemoClient.chat(model, messages, 2));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return LoopbackHttp.JSON.readTree(r.body());
  }

  /**
   * Waits until the tracker holds more of the home replica's blocks than its engine holds on GPU
   * (the CPU tier's copies arrived) and the count has not moved for three polls: the agent may hold
   * live batches behind its catch-up replay for a moment after registering, so "converged" (the
   * trackers agree with each other) does not yet mean the engine's events are in.
   */
  private static void awaitEventsApplied(String ingress, String engine) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    long last = -1;
    int stable = 0;
    while (stable < 3) {
      long gpu = LoopbackHttp.getJson(engine + "/sim/cache").path("blocks").asLong();
      long tracked = -1;
      for (JsonNode r : LoopbackHttp.getJson(ingress + "/admin/replicas")) {
        if (r.path("url").asText().equals(engine)) {
          tracked = r.path("blocks").asLong();
        }
      }
      stable = tracked > gpu && tracked == last ? stable + 1 : 0;
      last = tracked;
      assertThat(System.nanoTime())
          .as(
              "the tracker took in the engine's events (%d blocks tracked, %d on GPU)",
              tracked, gpu)
          .isLessThan(deadline);
      Thread.sleep(300); // a poll interval, not a synchronisation: the condition above decides
    }
  }

  /** The engine whose query counter moved between the two snapshots. */
  @Test
  void promptEvictedToTheCpuTier_isRoutedBackToItsReplica_whichReloadsIt() throws Exception {
    SimEngineConfig engine =
        SimEngineConfig.defaults()
            .withNumBlocks(128)
            .withCpuTier(4096, 100)
            .withTiming(new MockerTimingModel(20));
    DemoOptions options =
        new DemoOptions(1, 0, "127.0.0.1", 2, 0, 0, "kvrouter-demo", "kvrouter", engine);
    try (DemoCluster cluster = DemoCluster.start(options)) {
      cluster.awaitReady(Duration.ofSeconds(60));
      String ingress = cluster.ingressUrls().get(0);
      ArrayNode p = prompt(7);

      // p and then three other long prompts go straight to engine 0, behind the router's back (no
      // reservation predicts anything): the others evict p's blocks from its GPU, its CPU tier
      // keeps them, and the tracker learns all of it from the engine's events alone
      int home = 0;
      String homeUrl = cluster.engineUrls().get(home);
      post(homeUrl, options.model(), p);
      for (int i = 0; i < 3; i++) {
        post(homeUrl, options.model(), prompt(100 + 10L * i));
      }
      double loadedBefore = loaded(homeUrl);
      DemoClient.awaitConverged(ingress);
      awaitEventsApplied(ingress, homeUrl);

      List<EngineSnapshot> s1 = DemoClient.engineCounters(cluster);
      double predictedBefore = DemoClient.predictedCachedTokens(ingress);
      JsonNode again = post(ingress, options.model(), p);
      double predictedCached = DemoClient.predictedCachedTokens(ingress) - predictedBefore;
      int second = DemoClient.servedBy(s1, DemoClient.engineCounters(cluster));
      int cached = again.path("usage").path("prompt_tokens_details").path("cached_tokens").asInt();
      double reloaded = loaded(homeUrl) - loadedBefore;
      System.out.printf(
          "cpu tier: home engine %d, second request on %d (predicted %.0f tokens cached), engine"
              + " reports %d tokens cached, %.0f blocks reloaded from CPU%n",
          home, second, predictedCached, cached, reloaded);
      assertThat(predictedCached).as("the tracker's match on the CPU tier").isGreaterThan(1000);
      assertThat(second).as("routed back to the replica holding the prompt on CPU").isEqualTo(home);
      assertThat(reloaded).as("blocks the engine loaded back from its CPU tier").isGreaterThan(40);
      assertThat(cached).as("the engine reports the reloaded blocks cached").isGreaterThan(1000);
    }
  }
}

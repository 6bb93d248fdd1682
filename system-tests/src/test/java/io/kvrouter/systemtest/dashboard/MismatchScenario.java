package io.kvrouter.systemtest.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.cli.dev.DemoCluster;
import io.kvrouter.cli.dev.DemoOptions;
import io.kvrouter.loadtest.bench.PseudoWords;
import io.kvrouter.testing.LoopbackHttp;
import java.net.http.HttpResponse;

/**
 * A demo whose last engine runs KV blocks of 32 tokens while the router keys blocks of 16: the
 * engine's events arrive under keys no prompt ever matches, so the tracker predicts nothing cached
 * there while the engine reports hits. One ingress, two engines, round robin.
 *
 * <p>{@link #drive}: every prompt is first sent straight to both engines (warming their caches
 * behind the router's back, as other ingresses or an earlier life would), then once through the
 * ingress. The regular replica's blocks reach the tracker through its events, so its prediction
 * matches its report; the mismatched replica reports hits the tracker never predicted. Each prompt
 * crosses the router once, so no reservation-made prediction can hide the mismatch.
 */
final class MismatchScenario {

  static final String MISMATCHED = "sim-mismatched-0";
  static final String REGULAR = "sim-0";

  private MismatchScenario() {}

  static DemoOptions options() {
    return DemoOptions.defaults()
        .onFreePorts()
        .withCounts(1, 2)
        .withPolicy("round_robin")
        .withSpeedup(50)
        .withMismatchedBlockSize(32);
  }

  /** Long prompt {@code i} of the scenario, one token of answer. */
  private static ObjectNode prompt(String model, int i) {
    return LoopbackHttp.JSON
        .createObjectNode()
        .put("model", model)
        .put("prompt", PseudoWords.words(7_000 + i, 400))
        .put("max_tokens", 1);
  }

  /** Sends {@code prompts} long prompts as described above; every answer must be a 200. */
  static void drive(DemoCluster cluster, int prompts) throws Exception {
    String model = cluster.options().model();
    java.util.Map<String, Long> before = blocks(cluster);
    for (int i = 0; i < prompts; i++) {
      ObjectNode body = prompt(model, i);
      for (String engine : cluster.engineUrls()) {
        HttpResponse<String> warm = LoopbackHttp.post(engine + "/v1/completions", body);
        assertThat(warm.statusCode()).as(warm.body()).isEqualTo(200);
      }
    }
    awaitEventsApplied(cluster, before);
    for (int i = 0; i < prompts; i++) {
      ObjectNode body = prompt(model, i);
      HttpResponse<String> r =
          LoopbackHttp.post(cluster.ingressUrls().get(0) + "/v1/completions", body);
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    }
  }

  /** Blocks the tracker holds per replica. */
  private static java.util.Map<String, Long> blocks(DemoCluster cluster) throws Exception {
    java.util.Map<String, Long> out = new java.util.HashMap<>();
    for (var r :
        LoopbackHttp.JSON.readTree(
            LoopbackHttp.getOk(cluster.ingressUrls().get(0) + "/admin/replicas"))) {
      out.put(r.path("replica").asText(), r.path("blocks").asLong());
    }
    return out;
  }

  /**
   * Waits until the warm-up's events reached the tracker: the regular replica holds exactly its
   * engine's blocks, the mismatched one more than before the warm-up (the agents' alignment probes
   * left a few blocks there already).
   */
  private static void awaitEventsApplied(DemoCluster cluster, java.util.Map<String, Long> before)
      throws Exception {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (true) {
      long regular = cluster.fleet().engines().get(0).cachedBlockHashes().length;
      java.util.Map<String, Long> now = blocks(cluster);
      boolean all =
          now.size() == 2
              && now.getOrDefault(REGULAR, -1L) == regular
              && now.getOrDefault(MISMATCHED, -1L) > before.getOrDefault(MISMATCHED, 0L);
      if (all) {
        return;
      }
      assertThat(System.nanoTime())
          .as("warm-up events applied; tracker %s, regular engine %d blocks", now, regular)
          .isLessThan(deadline);
      Thread.sleep(100); // polling the tracker's view, bounded by the deadline
    }
  }
}

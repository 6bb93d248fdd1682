package io.kvrouter.loadtest.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.loadtest.bench.PseudoWords;
import io.kvrouter.loadtest.demo.DemoCluster;
import io.kvrouter.loadtest.demo.DemoOptions;
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
    for (int i = 0; i < prompts; i++) {
      ObjectNode body = prompt(model, i);
      for (String engine : cluster.engineUrls()) {
        HttpResponse<String> warm = LoopbackHttp.post(engine + "/v1/completions", body);
        assertThat(warm.statusCode()).as(warm.body()).isEqualTo(200);
      }
    }
    awaitEventsApplied(cluster);
    for (int i = 0; i < prompts; i++) {
      ObjectNode body = prompt(model, i);
      HttpResponse<String> r =
          LoopbackHttp.post(cluster.ingressUrls().get(0) + "/v1/completions", body);
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    }
  }

  /**
   * Waits until the tracker's view caught up with the warm-up: it holds blocks of both replicas,
   * and exactly as many of the regular replica's as its engine caches (its last events applied, so
   * the routed prompts find the tracker's prediction complete).
   */
  private static void awaitEventsApplied(DemoCluster cluster) throws Exception {
    int regularHeld = cluster.fleet().engines().get(0).cachedBlockHashes().length;
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (true) {
      var replicas =
          LoopbackHttp.JSON.readTree(
              LoopbackHttp.getOk(cluster.ingressUrls().get(0) + "/admin/replicas"));
      boolean all = replicas.size() == 2;
      for (var r : replicas) {
        long blocks = r.path("blocks").asLong();
        all &= REGULAR.equals(r.path("replica").asText()) ? blocks == regularHeld : blocks > 0;
      }
      if (all) {
        return;
      }
      assertThat(System.nanoTime())
          .as(
              "warm-up events applied (%d blocks on %s); replicas: %s",
              regularHeld, REGULAR, replicas)
          .isLessThan(deadline);
      Thread.sleep(100); // polling the tracker's view, bounded by the deadline
    }
  }
}

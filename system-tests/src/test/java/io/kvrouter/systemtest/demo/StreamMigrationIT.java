package io.kvrouter.systemtest.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.cli.dev.DemoCluster;
import io.kvrouter.cli.dev.DemoOptions;
import io.kvrouter.testing.LoopbackHttp;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * A simulated engine dies while it streams answers: every stream it was serving goes on at another
 * replica and ends with {@code [DONE]}, without an error event, one {@code id} throughout, and with
 * the text the same request gets uncut afterwards (the sim's answer depends on its context only, in
 * words the demo model's tokenizer encodes back to the same tokens); the ingresses count the
 * migrations, and no reservation is left behind.
 */
class StreamMigrationIT {

  private static final int STREAMS = 12;

  /** What one stream saw: where it began, its chunk ids, whether it ended well. */
  private record Streamed(
      int status, String replica, List<String> ids, boolean error, boolean done, String text) {}

  @Test
  void killedEngine_itsStreamsGoOnElsewhere_toTheirEnd() throws Exception {
    DemoOptions options = DemoOptions.defaults().onFreePorts();
    ExecutorService clients = Executors.newFixedThreadPool(STREAMS);
    try (DemoCluster cluster = DemoCluster.start(options)) {
      cluster.awaitReady(Duration.ofSeconds(60));
      ActorTestKit kit = ActorTestKit.create(cluster.agentNode());
      CountDownLatch streamingOnSim0 = new CountDownLatch(1);
      List<CompletableFuture<Streamed>> pending = new ArrayList<>();
      List<ObjectNode> bodies = new ArrayList<>();
      for (int i = 0; i < STREAMS; i++) {
        ObjectNode body = LoopbackHttp.JSON.createObjectNode();
        body.put("model", options.model());
        body.put("prompt", DemoClient.words(3000 + i, 200));
        body.put("max_tokens", 300);
        body.put("stream", true);
        String ingress = cluster.ingressUrls().get(i % 2);
        bodies.add(body);
        pending.add(
            CompletableFuture.supplyAsync(() -> stream(ingress, body, streamingOnSim0), clients));
      }
      assertThat(streamingOnSim0.await(60, TimeUnit.SECONDS))
          .as("a stream began on sim-0")
          .isTrue();
      cluster.fleet().engines().get(0).close();

      int onSim0 = 0;
      for (int i = 0; i < STREAMS; i++) {
        Streamed s = pending.get(i).get(3, TimeUnit.MINUTES);
        assertThat(s.status()).as("%s", s).isEqualTo(200);
        assertThat(s.done()).as("ended with [DONE]: %s", s).isTrue();
        assertThat(s.error()).as("no error event: %s", s).isFalse();
        assertThat(s.ids()).as("one id throughout: %s", s).containsOnly(s.ids().get(0));
        assertThat(s.text()).isNotEmpty();
        if ("sim-0".equals(s.replica())) {
          onSim0++;
          Streamed uncut =
              stream(cluster.ingressUrls().get(0), bodies.get(i), new CountDownLatch(1));
          assertThat(s.text())
              .as("the uncut answer, served by %s", uncut.replica())
              .isEqualTo(uncut.text());
        }
      }
      double migrated = 0;
      for (String ingress : cluster.ingressUrls()) {
        migrated += migrated(ingress);
      }
      System.out.printf(
          "StreamMigrationIT: %d streams, %d began on sim-0, %.0f migrations%n",
          STREAMS, onSim0, migrated);
      assertThat(migrated).as("the streams sim-0 was serving moved").isPositive();
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
    } finally {
      clients.shutdownNow();
    }
  }

  /** The streams {@code ingress} moved to another replica. */
  private static double migrated(String ingress) throws Exception {
    String sample = "kvrouter_migrations_total{outcome=\"migrated\"}";
    for (String line : LoopbackHttp.get(ingress + "/metrics").body().split("\n")) {
      if (line.startsWith(sample)) {
        return Double.parseDouble(line.substring(sample.length()).trim());
      }
    }
    return 0;
  }

  private static Streamed stream(String ingress, ObjectNode body, CountDownLatch onSim0) {
    try {
      HttpResponse<InputStream> r =
          LoopbackHttp.postForStream(
              ingress + "/v1/completions", body.toString(), Duration.ofSeconds(180));
      String replica = r.headers().firstValue("x-kvrouter-replica").orElse("");
      List<String> ids = new ArrayList<>();
      boolean[] errorAndDone = new boolean[2];
      StringBuilder text = new StringBuilder();
      LoopbackHttp.sseData(
          r.body(),
          data -> {
            if (data.equals("[DONE]")) {
              errorAndDone[1] = true;
              return;
            }
            JsonNode chunk;
            try {
              chunk = LoopbackHttp.JSON.readTree(data);
            } catch (java.io.IOException e) {
              throw new IllegalStateException(e);
            }
            if (chunk.has("error")) {
              errorAndDone[0] = true;
              return;
            }
            ids.add(chunk.path("id").asText());
            text.append(chunk.path("choices").path(0).path("text").asText(""));
            if (replica.equals("sim-0") && text.length() > 0) {
              onSim0.countDown();
            }
          });
      return new Streamed(
          r.statusCode(), replica, ids, errorAndDone[0], errorAndDone[1], text.toString());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}

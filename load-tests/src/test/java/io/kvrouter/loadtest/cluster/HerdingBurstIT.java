package io.kvrouter.loadtest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.agent.sim.SimEngine;
import io.kvrouter.loadtest.bench.PseudoWords;
import io.kvrouter.testing.LoopbackHttp;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * Herding: a burst of long requests with unique prompts, sent at once through 4 ingresses to 8
 * replicas. Once every request is running, the per-replica count of requests gives max ÷ mean (1.0
 * is a perfect spread). Reported for broadcast, broadcast without near-tie randomisation, and
 * strict mode, side by side in one run.
 */
class HerdingBurstIT {

  static final int INGRESSES = 4;
  static final int REPLICAS = 8;

  record Spread(String mode, int burst, int[] perReplica, double maxOverMean) {}

  static Spread burst(String mode, Config extra, int burst) throws Exception {
    try (ClusterHarness cluster = new ClusterHarness(1)) {
      for (int i = 0; i < INGRESSES; i++) {
        cluster.addIngress(extra);
      }
      cluster.startAgent("a", REPLICAS / 2);
      cluster.startAgent("b", REPLICAS / 2);
      ActorTestKit kit = ActorTestKit.create(cluster.ingresses().get(0).system());
      cluster.awaitReady(kit, REPLICAS);
      List<SimEngine> engines = new ArrayList<>(cluster.agent("a").fleet().engines());
      engines.addAll(cluster.agent("b").fleet().engines());

      // Build every request first, then release them together.
      CountDownLatch go = new CountDownLatch(1);
      List<CompletableFuture<?>> sent = new ArrayList<>();
      for (int r = 0; r < burst; r++) {
        String body =
            "{\"model\":\""
                + ClusterHarness.MODEL
                + "\",\"prompt\":\""
                + PseudoWords.words(50_000 + r, 120)
                + "\",\"max_tokens\":5000}";
        HttpRequest request =
            HttpRequest.newBuilder(
                    URI.create(cluster.ingresses().get(r % INGRESSES).url() + "/v1/completions"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        sent.add(
            CompletableFuture.runAsync(
                () -> {
                  try {
                    go.await();
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  LoopbackHttp.CLIENT.sendAsync(request, HttpResponse.BodyHandlers.discarding());
                }));
      }
      go.countDown();
      CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).join();

      int[] perReplica = new int[engines.size()];
      kit.createTestProbe()
          .awaitAssert(
              Duration.ofSeconds(30),
              Duration.ofMillis(100),
              () -> {
                int total = 0;
                for (int e = 0; e < engines.size(); e++) {
                  perReplica[e] = inFlight(engines.get(e));
                  total += perReplica[e];
                }
                assertThat(total).as("every request of the burst is running").isEqualTo(burst);
                return null;
              });
      int max = 0;
      for (int c : perReplica) {
        max = Math.max(max, c);
      }
      return new Spread(mode, burst, perReplica, max / ((double) burst / engines.size()));
    }
  }

  static int inFlight(SimEngine engine) throws Exception {
    return (int)
        LoopbackHttp.metric(
            engine.baseUrl(), "vllm:num_requests_running", "vllm:num_requests_waiting");
  }

  @Test
  void burstThroughFourIngresses_maxOverMeanPerReplica_broadcastStrictAndWithoutRandomisation()
      throws Exception {
    List<Spread> spreads = new ArrayList<>();
    for (int burst : new int[] {24}) {
      spreads.add(burst("broadcast", ConfigFactory.empty(), burst));
      spreads.add(
          burst(
              "broadcast, no near-tie randomisation",
              ConfigFactory.parseString("kvrouter.tracker.near-tie-randomisation = off"),
              burst));
      spreads.add(
          burst("strict", ConfigFactory.parseString("kvrouter.consistency = strict"), burst));
    }
    System.out.println("| mode | burst | requests per replica | max ÷ mean |");
    System.out.println("|---|---|---|---|");
    for (Spread s : spreads) {
      System.out.printf(
          "| %s | %d | %s | %.2f |%n",
          s.mode(), s.burst(), java.util.Arrays.toString(s.perReplica()), s.maxOverMean());
      assertThat(java.util.Arrays.stream(s.perReplica()).sum()).isEqualTo(s.burst());
      assertThat(s.maxOverMean()).isGreaterThanOrEqualTo(1.0);
    }
  }
}

package io.kvrouter.systemtest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.loadtest.bench.PseudoWords;
import io.kvrouter.sim.SimEngine;
import io.kvrouter.testing.LoopbackHttp;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * Herding: a burst of 24 long requests with unique prompts, sent at once through 4 ingresses to 8
 * replicas. Once every request is running, the per-replica count of requests gives max ÷ mean (1.0
 * is a perfect spread, 3 per replica). Each mode runs on a fresh cluster; the suite runs each mode
 * once, {@code -Dherding.runs=5} runs five bursts per mode and prints every spread and the five
 * figures per mode ({@code
 * -Dherding.modes=broadcast,strict,strict-no-ties,broadcast-no-ties,broadcast-no-intents} picks the
 * modes; the {@code -no-ties} and {@code -no-intents} modes show the herding the defaults prevent).
 *
 * <p>Why the defaults spread: a request no replica holds any of goes, among its near-ties, to the
 * replica holding the fewest of this router's own requests, equals taken in the replicas' hash
 * order from this router's starting point ({@code rank × replicas ÷ routers}); the near-ties are
 * found without the peers' reservations of the last 100 ms, the ones some routers hold and others
 * not yet. A burst is not simultaneous here: its decisions spread over a few hundred ms and a
 * peer's reservation reaches the others 50-170 ms after it is made (four ingresses and two agents
 * in one JVM on 2 cores), so each router decides on a view holding some of the others' choices and
 * not others. In strict mode a gate that turns a request away counts it with what it holds, and the
 * turned-away reservation's predicted blocks end at once, so the retry is not drawn back by a
 * phantom cache hit.
 *
 * <p>The bounds come from repeated five-burst runs on a shared 2-core machine: strict mode spread
 * 1.00 in every burst; broadcast 1.00 in 14 of 15 bursts and 1.33 in one. So strict is asserted to
 * spread perfectly and one broadcast burst at most 4 of a mean of 3. The measurements behind the
 * tie rule are in {@code docs/policy.md}.
 */
class HerdingBurstIT {

  static final int INGRESSES = 4;
  static final int REPLICAS = 8;

  /** Bound on max ÷ mean in strict mode: 3 of a mean of 3 (repeated runs: class comment). */
  static final double STRICT_BOUND = 1.0 + 1e-9;

  /**
   * Bound on max ÷ mean of one burst in broadcast mode: 4 of a mean of 3 (14 of 15 bursts were
   * 1.00, one 1.33; see the class comment).
   */
  static final double BROADCAST_BOUND = 4.0 / 3.0 + 1e-9;

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

  /** Bursts per mode: {@code -Dherding.runs=5} for the five-run figures (the suite runs one). */
  static final int RUNS = Integer.getInteger("herding.runs", 1);

  static final int BURST = 24;

  /** Concurrent decisions neither spread nor announced: herding, for comparison. */
  static final String NO_SPREAD =
      "kvrouter.tracker.policy.ties.spread = off\nkvrouter.tracker.policy.intents.enabled = off";

  /** The modes compared, by name. */
  static final Map<String, Config> MODE_CONFIG =
      Map.of(
          "broadcast",
          ConfigFactory.empty(),
          "strict",
          ConfigFactory.parseString("kvrouter.consistency = strict"),
          "strict-no-ties",
          ConfigFactory.parseString("kvrouter.consistency = strict\n" + NO_SPREAD),
          "broadcast-no-ties",
          ConfigFactory.parseString(NO_SPREAD),
          "broadcast-no-intents",
          ConfigFactory.parseString("kvrouter.tracker.policy.intents.enabled = off"));

  /** Modes to run: {@code -Dherding.modes=broadcast,strict,strict-no-ties} (default both). */
  static final List<String> MODES =
      List.of(System.getProperty("herding.modes", "broadcast,strict").split(","));

  @Test
  void burstThroughFourIngresses_spreadsEvenlyInStrictMode_andWithinBoundInBroadcast()
      throws Exception {
    List<Spread> spreads = new ArrayList<>();
    for (int run = 0; run < RUNS; run++) {
      for (String mode : MODES) {
        spreads.add(burst(mode, MODE_CONFIG.get(mode), BURST));
      }
    }
    System.out.println("| run | mode | requests per replica | max ÷ mean |");
    System.out.println("|---|---|---|---|");
    for (int i = 0; i < spreads.size(); i++) {
      Spread s = spreads.get(i);
      System.out.printf(
          "| %d | %s | %s | %.2f |%n",
          i / MODES.size() + 1, s.mode(), Arrays.toString(s.perReplica()), s.maxOverMean());
    }
    for (String mode : MODES) {
      System.out.printf(
          "%s max ÷ mean over %d runs: %s%n",
          mode,
          RUNS,
          spreads.stream()
              .filter(s -> s.mode().equals(mode))
              .map(s -> String.format("%.2f", s.maxOverMean()))
              .toList());
    }
    for (Spread s : spreads) {
      assertThat(Arrays.stream(s.perReplica()).sum()).isEqualTo(s.burst());
      assertThat(s.maxOverMean())
          .as(s.mode() + " " + Arrays.toString(s.perReplica()))
          .isLessThanOrEqualTo(s.mode().startsWith("strict") ? STRICT_BOUND : BROADCAST_BOUND);
    }
  }
}

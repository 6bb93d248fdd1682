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
 * modes).
 *
 * <p>The bounds come from repeated runs. Since commits 7d532d1 and 566fa19 (strict mode: a gate
 * that turns a request away is counted with what it holds instead of excluded for the round, and
 * the turned-away reservation's predicted blocks end at once instead of drawing the retry back as a
 * phantom cache hit), on the 2-core VM shared with other builds: strict 1.00 in all five bursts
 * (23:57-00:01 UTC 2 Dec, load average 6 falling to 2), and again 1.00 in all five with broadcast
 * 1.33, 1.67, 1.67, 1.67, 1.33 (00:02-00:10, load average 5 falling to 2). Before (1 Dec 2026,
 * instrumented: every gate admission and refusal was exact, and every 4 came from one of those two
 * causes): strict 1.33, 1.33, 1.33, 1.33, 1.00 (load average 9-13); broadcast 1.33, 1.67, 1.67,
 * 1.33, 1.33 and strict 1.00, 1.00, 1.33, 1.00, 1.33 (21:14-21:22, load average 7-13). Striping
 * over the shared view ({@code broadcast-stripe}, {@code kvrouter@stripe=true}) gave 3.00, 2.67,
 * 1.67, 1.67, 2.00 (21:03-21:11, load average 3-14) and 1.33, 1.33, 1.33 in three bursts at load
 * average 20-27 (20:36-20:45), so it is off by default. So strict mode is asserted to spread
 * perfectly (the 1.0); broadcast was asserted at most twice the mean, as its tie rule then
 * (turns, {@code broadcast-turns}) did not meet the 1.15. The rule that does is below.
 *
 * <p>Tried on 2 Dec 2026 and not kept: each router taking the near-tie with the fewest requests in
 * flight on its own view, equals resolved by the replicas' hash order rotated to start at {@code
 * turn × replicas ÷ routers}, which spreads 4 routers × 6 simultaneous blind decisions exactly 3
 * per replica (a unit model of it did). Here it gave 1.00, 1.67, 1.33, then 1.33, 1.33, 1.33, then
 * (waiting 2.5 s after readiness so that every router had heard every other's reservation mark)
 * 1.00, 1.33, 1.67, 1.33; broadcast beside it 1.33, 1.67, 1.33. Logged decisions showed why: the
 * burst is not simultaneous here. Its 24 decisions spread over about 220 ms (one ingress placed
 * five before another placed its first), and a peer's reservation reached the others 50-170 ms
 * after it was made (four ingresses and two agents in one JVM on 2 cores), so each router decides
 * on a view holding some of the others' choices and not others. Within the first second after
 * readiness, a router may also not have heard one peer's reservation mark yet (one run: a router
 * counted 3 routers and took the turn another held), so two routers share a turn.
 *
 * <p>Kept on 2 Dec 2026, the default since (concurrency {@code own}, {@code NearTies.byOwnLoad}): a
 * request no replica holds any of goes, among its near-ties, to the one holding the fewest of this
 * router's own requests, equals in the replicas' hash order from this router's starting point
 * ({@code rank × replicas ÷ routers}, no rotation), and the near-ties are found without the peers'
 * reservations of the last 100 ms ({@code blindMillis}), the ones some routers hold and others not
 * yet. Logged decisions of the first tries showed why both halves matter: ties found on each
 * router's partial view drop the replicas a peer's early reservation reached, and the position
 * taken among a shrinking set of ties moves each router's starting point. Broadcast, with it: 1.00,
 * 1.00, 1.00, 1.00, 1.00 (05:10-05:14 UTC, load average 3-5, as {@code broadcast-own}), then as the
 * default 1.00, 1.33, 1.00, 1.00, 1.00 (05:19-05:23), and with the final code 1.00 in all five
 * beside {@code broadcast-turns} at 1.33, 1.67, 1.67, 1.33, 2.00 (06:50-06:55; turns fail the bound
 * below with 5 and 6 on a replica): the 1.15 in 4 of 5 runs is met. Earlier steps: own-load
 * order with positions among the ties only 1.33, 1.33, 1.33; positions among all candidates 1.00,
 * 1.00, 1.33; ties blind to peers' last two mean delays only (a few ms here, against 50-170 ms late
 * arrivals) 1.00, 1.33, 1.33, 1.33. One burst in fifteen still ends at 1.33, so the suite's single
 * burst asserts 4 of a mean of 3 (turns gave 5 and 6), and the five-run figures are printed.
 *
 * <p>Intents (3 Dec 2026, on by default since; {@code broadcast-no-intents} runs without). These
 * prompts are short, so none is announced; what intents change for them is only the tie rule. With
 * every decision under the announced requests' rule (least queued prefill) the burst herded: 1.33,
 * 1.33, 1.67, 2.00, 1.33 (09:41-09:45 UTC, beside broadcast without intents at 1.00, 1.33, 1.33,
 * 1.00, 1.00). Unannounced requests keep the own-load rule since, and gave 1.00 in all five bursts
 * (09:57-10:02, beside 1.00, 1.00, 1.33, 1.00, 1.00 without intents). As the default: broadcast
 * 1.00, 1.00, 1.00, 1.33, 1.00 and strict 1.00 in all five (12:37-12:42, load average 4); on the
 * final build of that day broadcast 1.00, 1.00, 1.00, 1.00, 1.33, strict 1.00 in all five.
 */
class HerdingBurstIT {

  static final int INGRESSES = 4;
  static final int REPLICAS = 8;

  /** Bound on max ÷ mean in strict mode: 3 of a mean of 3 (the runs are in the class comment). */
  static final double STRICT_BOUND = 1.0 + 1e-9;

  /**
   * Bound on max ÷ mean of one burst in broadcast mode: 4 of a mean of 3 (14 of 15 bursts were
   * 1.00, one 1.33; runs in the class comment).
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

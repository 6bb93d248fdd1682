package io.kvrouter.loadtest.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BenchRunnerTest {

  private static final int CHUNKS = 4;

  private static BenchConfig config(List<URI> targets, FakeOpenAiServer metrics) {
    return new BenchConfig(
        targets,
        "fake-model",
        BenchEndpoint.COMPLETIONS,
        -1,
        Duration.ofSeconds(30),
        64,
        Duration.ofSeconds(20),
        null,
        false,
        metrics == null ? List.of() : List.of(metrics.base()),
        TargetPolicy.ROUND_ROBIN,
        0);
  }

  /** {@code n} text requests due 1 ms apart. */
  private static List<BenchRequest> requests(int n) {
    List<BenchRequest> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(
          new BenchRequest(i * 1_000_000L, null, BenchPrompt.text("hello " + i), 8, "g" + (i % 2)));
    }
    return out;
  }

  @Test
  void streamingRun_recordsTtftItlE2eUsageAndEngineHitRate(@TempDir Path dir) throws Exception {
    try (FakeOpenAiServer server =
        new FakeOpenAiServer(FakeOpenAiServer.Mode.STREAM, CHUNKS, 2, 12)) {
      BenchRunner runner = new BenchRunner(config(List.of(server.base()), server));
      BenchRun run = runner.run(BenchRequestSource.of("list", requests(12)));

      assertThat(run.outcomes()).hasSize(12);
      assertThat(server.received()).isEqualTo(12);
      for (RequestOutcome o : run.outcomes()) {
        assertThat(o.status()).as(o.error()).isEqualTo(RequestOutcome.Status.OK);
        assertThat(o.chunkNanos()).hasSize(CHUNKS);
        assertThat(o.gapCount()).isEqualTo(CHUNKS - 1);
        assertThat(o.ttftCorrectedNanos()).isPositive().isLessThan(o.e2eCorrectedNanos());
        assertThat(o.ttftUncorrectedNanos()).isLessThanOrEqualTo(o.ttftCorrectedNanos());
        assertThat(o.promptTokens()).isEqualTo(FakeOpenAiServer.PROMPT_TOKENS);
        assertThat(o.completionTokens()).isEqualTo(CHUNKS);
        assertThat(o.cachedTokens()).isEqualTo(FakeOpenAiServer.CACHED_TOKENS);
      }
      assertThat(runner.counters().ok()).isEqualTo(12);
      assertThat(runner.counters().inFlight()).isZero();

      BenchSummary s = BenchSummary.of(run, "kvrouter bench --url " + server.base());
      assertThat(s.counts().ok()).isEqualTo(12);
      assertThat(s.counts().errors()).isZero();
      assertThat(s.latencyMs().itl().count()).isEqualTo(12L * (CHUNKS - 1));
      assertThat(s.latencyMs().ttft().corrected().count()).isEqualTo(12);
      assertThat(s.latencyMs().ttft().corrected().p50())
          .isLessThan(s.latencyMs().e2e().corrected().p50());
      assertThat(s.tokens().cachedRatio()).isEqualTo(0.4);
      assertThat(s.tokens().completion()).isEqualTo(12L * CHUNKS);
      // 1000 queries / 900 hits before; +100/+40 per request: the run's own rate is 40%, not
      // 900/1000.
      assertThat(s.engines().deltaQueries()).isEqualTo(1200.0);
      assertThat(s.engines().deltaHits()).isEqualTo(480.0);
      assertThat(s.engines().hitRate()).isEqualTo(0.4);
      EngineDelta engine = s.engines().perEngine().get(0);
      assertThat(engine.hitRateBefore()).isEqualTo(0.9);
      assertThat(engine.deltaRequests()).isEqualTo(12.0);
      assertThat(s.targets()).singleElement().satisfies(t -> assertThat(t.ok()).isEqualTo(12));

      ResultsWriter.write(dir, s, run);
      byte[] png = Files.readAllBytes(dir.resolve(TtftChart.FILE));
      assertThat(png).startsWith(0x89, 'P', 'N', 'G');
      assertThat(Files.readAllLines(dir.resolve("requests.csv")))
          .hasSize(13)
          .element(1)
          .asString()
          .contains(",OK,200,");
      JsonNode json = new ObjectMapper().readTree(Files.readString(dir.resolve("results.json")));
      assertThat(json.path("counts").path("ok").asInt()).isEqualTo(12);
      assertThat(json.path("counts").path("timeouts").isInt()).isTrue();
      for (String metric : List.of("ttft", "e2e")) {
        for (String view : List.of("corrected", "uncorrected")) {
          JsonNode l = json.path("latencyMs").path(metric).path(view);
          for (String f : List.of("p50", "p90", "p99", "max", "mean")) {
            assertThat(l.path(f).isNumber()).as(metric + "." + view + "." + f).isTrue();
          }
        }
      }
      assertThat(json.path("latencyMs").path("itl").path("p99").isNumber()).isTrue();
      assertThat(json.path("throughput").path("requestsPerSecond").asDouble()).isPositive();
      assertThat(json.path("engines").path("hitRate").asDouble()).isEqualTo(0.4);
      assertThat(json.path("tokens").path("cachedRatio").asDouble()).isEqualTo(0.4);
      assertThat(json.path("targets").get(0).path("sent").asInt()).isEqualTo(12);
      assertThat(json.path("config").has("apiKey")).isFalse();
      assertThat(Files.readString(dir.resolve("report.md")))
          .contains("kvrouter bench --url " + server.base())
          .contains("40.0%");
      assertThat(server.bodies().get(0))
          .contains("\"stream\":true")
          .contains("\"include_usage\":true")
          .contains("\"model\":\"fake-model\"");
    }
  }

  @Test
  void http500_isCountedAsHttpError() throws Exception {
    try (FakeOpenAiServer server =
        new FakeOpenAiServer(FakeOpenAiServer.Mode.ERROR_500, CHUNKS, 0, 5)) {
      BenchRun run =
          new BenchRunner(config(List.of(server.base()), null))
              .run(BenchRequestSource.of("list", requests(5)));
      BenchSummary s = BenchSummary.of(run, "");
      assertThat(s.counts().httpErrors()).isEqualTo(5);
      assertThat(s.counts().ok()).isZero();
      assertThat(s.latencyMs().e2e().corrected().count()).isZero();
      assertThat(s.errorSamples())
          .anySatisfy(e -> assertThat(e).contains("HTTP 500").contains("engine exploded"));
    }
  }

  @Test
  void streamEndingBeforeDone_isCountedAsStreamError() throws Exception {
    try (FakeOpenAiServer server =
        new FakeOpenAiServer(FakeOpenAiServer.Mode.CLOSE_EARLY, CHUNKS, 0, 3)) {
      BenchRun run =
          new BenchRunner(config(List.of(server.base()), null))
              .run(BenchRequestSource.of("list", requests(3)));
      assertThat(run.outcomes())
          .allSatisfy(
              o -> {
                assertThat(o.status()).isEqualTo(RequestOutcome.Status.STREAM_ERROR);
                assertThat(o.error()).contains("before [DONE]");
                assertThat(o.chunkNanos()).hasSize(1);
              });
      assertThat(BenchSummary.of(run, "").counts().streamErrors()).isEqualTo(3);
    }
  }

  @Test
  void openLoop_sendsEveryRequestWhileNoneHasCompleted() throws Exception {
    int n = 8;
    try (FakeOpenAiServer server = new FakeOpenAiServer(FakeOpenAiServer.Mode.HOLD, 2, 0, n)) {
      BenchRunner runner = new BenchRunner(config(List.of(server.base()), null));
      CompletableFuture<BenchRun> run =
          CompletableFuture.supplyAsync(
              () -> runQuietly(runner, BenchRequestSource.of("list", requests(n))));
      // Every request reaches the server although the server has answered none of them.
      assertThat(server.arrivals().await(20, TimeUnit.SECONDS)).isTrue();
      assertThat(runner.counters().ok()).isZero();
      assertThat(runner.counters().inFlight()).isEqualTo(n);
      server.release();
      BenchRun done = run.get(30, TimeUnit.SECONDS);
      assertThat(done.outcomes())
          .allSatisfy(o -> assertThat(o.status()).isEqualTo(RequestOutcome.Status.OK));
    }
  }

  @Test
  void concurrencyCap_dropsRequestsInsteadOfDelayingThem() throws Exception {
    try (FakeOpenAiServer server = new FakeOpenAiServer(FakeOpenAiServer.Mode.HOLD, 2, 0, 2)) {
      BenchConfig cfg =
          config(List.of(server.base()), null)
              .withLimits(-1, Duration.ofSeconds(30), 2, Duration.ofSeconds(20));
      List<BenchRequest> burst = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        burst.add(new BenchRequest(0, null, BenchPrompt.text("same time " + i), 4, ""));
      }
      CountDownLatch exhausted = new CountDownLatch(1);
      BenchRequestSource source =
          signallingWhenExhausted(BenchRequestSource.of("burst", burst), exhausted);
      BenchRunner runner = new BenchRunner(cfg);
      CompletableFuture<BenchRun> run =
          CompletableFuture.supplyAsync(() -> runQuietly(runner, source));
      assertThat(exhausted.await(20, TimeUnit.SECONDS)).isTrue();
      server.release();
      BenchSummary s = BenchSummary.of(run.get(30, TimeUnit.SECONDS), "");
      assertThat(s.counts().sent()).isEqualTo(2);
      assertThat(s.counts().ok()).isEqualTo(2);
      assertThat(s.counts().dropped()).isEqualTo(4);
      assertThat(s.counts().total()).isEqualTo(6);
      assertThat(server.received()).isEqualTo(2);
    }
  }

  @Test
  void requestsGoRoundRobinOverSeveralIngresses() throws Exception {
    try (FakeOpenAiServer a = new FakeOpenAiServer(FakeOpenAiServer.Mode.STREAM, 2, 0, 3);
        FakeOpenAiServer b = new FakeOpenAiServer(FakeOpenAiServer.Mode.STREAM, 2, 0, 3)) {
      BenchConfig cfg = config(List.of(a.base(), URI.create(b.base() + "/v1")), null);
      BenchSummary s =
          BenchSummary.of(new BenchRunner(cfg).run(BenchRequestSource.of("list", requests(6))), "");
      assertThat(a.received()).isEqualTo(3);
      assertThat(b.received()).isEqualTo(3);
      assertThat(s.targets()).extracting(BenchSummary.TargetCounts::ok).containsExactly(3, 3);
    }
  }

  @Test
  void followingReadiness_aTargetWhoseListenerClosedSinceItsLastProbe_getsNoRequestLost()
      throws Exception {
    FakeOpenAiServer gone = new FakeOpenAiServer(FakeOpenAiServer.Mode.STREAM, 1, 0, 1);
    try (FakeOpenAiServer live = new FakeOpenAiServer(FakeOpenAiServer.Mode.STREAM, 1, 0, 1)) {
      List<BenchRequest> reqs = requests(6);
      java.util.Iterator<BenchRequest> it = reqs.iterator();
      // Both answer the warm-up and the first readiness poll (the next one is an hour away); the
      // first target's listener closes just before the first request is sent to it.
      BenchRequestSource source =
          new BenchRequestSource() {
            @Override
            public String name() {
              return "closing";
            }

            @Override
            public boolean hasNext() {
              return it.hasNext();
            }

            @Override
            public BenchRequest next() {
              gone.close();
              return it.next();
            }
          };
      BenchRunner runner =
          new BenchRunner(config(List.of(gone.base(), live.base()), null))
              .followReadiness(Duration.ofHours(1));
      BenchRun run = runner.run(source);
      assertThat(run.outcomes())
          .hasSize(6)
          .allSatisfy(o -> assertThat(o.status()).as(o.error()).isEqualTo(RequestOutcome.Status.OK))
          .allSatisfy(o -> assertThat(o.target()).isEqualTo(1));
      assertThat(runner.connectRetries()).isBetween(1, 6);
    } finally {
      gone.close();
    }
  }

  @Test
  void groupAffinity_keepsEachGroupOnOneTarget() throws Exception {
    try (FakeOpenAiServer a = new FakeOpenAiServer(FakeOpenAiServer.Mode.STREAM, 1, 0, 1);
        FakeOpenAiServer b = new FakeOpenAiServer(FakeOpenAiServer.Mode.STREAM, 1, 0, 1);
        FakeOpenAiServer c = new FakeOpenAiServer(FakeOpenAiServer.Mode.STREAM, 1, 0, 1)) {
      List<BenchRequest> reqs = new ArrayList<>();
      for (int i = 0; i < 24; i++) {
        reqs.add(new BenchRequest(0, null, BenchPrompt.text("p" + i), 2, "group-" + (i % 4)));
      }
      BenchConfig cfg =
          config(List.of(a.base(), b.base(), c.base()), null)
              .withTargetPolicy(TargetPolicy.GROUP_AFFINITY);
      BenchRun run = new BenchRunner(cfg).run(BenchRequestSource.of("list", reqs));
      assertThat(run.outcomes())
          .hasSize(24)
          .allSatisfy(o -> assertThat(o.status()).isEqualTo(RequestOutcome.Status.OK));
      java.util.Map<String, java.util.Set<Integer>> targetsByGroup = new java.util.HashMap<>();
      for (RequestOutcome o : run.outcomes()) {
        targetsByGroup.computeIfAbsent(o.group(), k -> new java.util.HashSet<>()).add(o.target());
      }
      assertThat(targetsByGroup).hasSize(4).allSatisfy((g, t) -> assertThat(t).hasSize(1));
      assertThat(a.received() + b.received() + c.received()).isEqualTo(24);
      assertThat(BenchSummary.of(run, "").config().targetPolicy()).isEqualTo("group-affinity");
    }
  }

  @Test
  void stop_endsTheRunEarly_cancellingWhatIsInFlight() throws Exception {
    try (FakeOpenAiServer server = new FakeOpenAiServer(FakeOpenAiServer.Mode.HOLD, 2, 0, 3)) {
      List<BenchRequest> reqs = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        reqs.add(new BenchRequest(0, null, BenchPrompt.text("now " + i), 2, ""));
      }
      reqs.add(
          new BenchRequest(
              Duration.ofMinutes(10).toNanos(), null, BenchPrompt.text("later"), 2, ""));
      BenchRunner runner =
          new BenchRunner(
              config(List.of(server.base()), server)
                  .withLimits(-1, Duration.ofHours(1), 64, Duration.ofSeconds(20)));
      CompletableFuture<BenchRun> run =
          CompletableFuture.supplyAsync(
              () -> runQuietly(runner, BenchRequestSource.of("list", reqs)));
      assertThat(server.arrivals().await(20, TimeUnit.SECONDS)).isTrue();
      runner.stop(); // the scheduler is parked until the 10-minute request; the three are held
      BenchRun done = run.get(30, TimeUnit.SECONDS);
      assertThat(done.stoppedEarly()).isTrue();
      assertThat(done.outcomes())
          .hasSize(3)
          .allSatisfy(o -> assertThat(o.status()).isEqualTo(RequestOutcome.Status.CANCELLED));
      BenchSummary s = BenchSummary.of(done, "");
      assertThat(s.counts().cancelled()).isEqualTo(3);
      assertThat(s.counts().errors()).isZero();
      assertThat(s.engines().perEngine()).hasSize(1);
      assertThat(MarkdownReport.render(s)).contains("Stopped early");
      assertThat(server.received()).isEqualTo(3);
    }
  }

  @Test
  void stalledStream_endsAsTimeout() throws Exception {
    try (FakeOpenAiServer server = new FakeOpenAiServer(FakeOpenAiServer.Mode.HOLD, 2, 0, 1)) {
      BenchConfig cfg =
          config(List.of(server.base()), null)
              .withLimits(-1, Duration.ofSeconds(30), 8, Duration.ofMillis(300));
      BenchSummary s =
          BenchSummary.of(new BenchRunner(cfg).run(BenchRequestSource.of("list", requests(2))), "");
      assertThat(s.counts().timeouts()).isEqualTo(2);
      assertThat(s.counts().ok()).isZero();
    }
  }

  @Test
  void refusedConnection_isASendError() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    BenchConfig cfg = config(List.of(URI.create("http://127.0.0.1:" + port)), null);
    BenchSummary s =
        BenchSummary.of(new BenchRunner(cfg).run(BenchRequestSource.of("list", requests(2))), "");
    assertThat(s.counts().sendErrors()).isEqualTo(2);
    assertThat(s.errorSamples())
        .anySatisfy(e -> assertThat(e).startsWith("SEND_ERROR: ConnectException"));
  }

  @Test
  void chatEndpoint_countsOnlyContentChunks_andDiscoversTheModel() throws Exception {
    try (FakeOpenAiServer server = new FakeOpenAiServer(FakeOpenAiServer.Mode.STREAM, 3, 1, 2)) {
      BenchConfig cfg =
          new BenchConfig(
              List.of(server.base()),
              null,
              BenchEndpoint.CHAT,
              2,
              Duration.ofSeconds(30),
              8,
              Duration.ofSeconds(20),
              "secret",
              false,
              List.of(),
              TargetPolicy.ROUND_ROBIN,
              0);
      BenchRun run = new BenchRunner(cfg).run(BenchRequestSource.of("list", requests(5)));
      assertThat(run.model()).isEqualTo("fake-model");
      assertThat(run.outcomes())
          .hasSize(2)
          .allSatisfy(
              o -> {
                assertThat(o.status()).isEqualTo(RequestOutcome.Status.OK);
                assertThat(o.chunkNanos()).hasSize(3); // the role-only first chunk is not content
              });
      assertThat(server.bodies().get(0)).contains("\"messages\":[{\"role\":\"user\"");
    }
  }

  @Test
  void warmUp_isSentFirstButNotRecorded() throws Exception {
    try (FakeOpenAiServer a = new FakeOpenAiServer(FakeOpenAiServer.Mode.STREAM, 2, 0, 1);
        FakeOpenAiServer b = new FakeOpenAiServer(FakeOpenAiServer.Mode.STREAM, 2, 0, 1)) {
      BenchConfig cfg = config(List.of(a.base(), b.base()), a).withWarmup(1);
      BenchSummary s =
          BenchSummary.of(new BenchRunner(cfg).run(BenchRequestSource.of("list", requests(4))), "");
      assertThat(a.received()).isEqualTo(3);
      assertThat(b.received()).isEqualTo(3);
      assertThat(a.bodies().get(0)).contains("warm-up");
      assertThat(s.counts().total()).isEqualTo(4);
      // the warm-up happened before the first scrape: only the two measured requests on a count
      assertThat(s.engines().deltaQueries()).isEqualTo(2.0 * FakeOpenAiServer.PROMPT_TOKENS);
    }
  }

  @Test
  void failingWarmUp_abortsBeforeTheRun() throws Exception {
    try (FakeOpenAiServer server = new FakeOpenAiServer(FakeOpenAiServer.Mode.ERROR_500, 2, 0, 1)) {
      BenchRunner runner = new BenchRunner(config(List.of(server.base()), null).withWarmup(1));
      assertThatThrownBy(() -> runner.run(BenchRequestSource.of("list", requests(4))))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("HTTP 500");
      assertThat(server.received()).isEqualTo(1);
    }
  }

  @Test
  void durationLimit_stopsIssuingRequestsDueLater() throws Exception {
    try (FakeOpenAiServer server = new FakeOpenAiServer(FakeOpenAiServer.Mode.STREAM, 1, 0, 1)) {
      List<BenchRequest> reqs =
          List.of(
              new BenchRequest(0, null, BenchPrompt.text("now"), 2, ""),
              new BenchRequest(
                  Duration.ofHours(1).toNanos(), null, BenchPrompt.text("much later"), 2, ""));
      BenchConfig cfg =
          config(List.of(server.base()), null)
              .withLimits(-1, Duration.ofSeconds(5), 8, Duration.ofSeconds(20));
      BenchRun run = new BenchRunner(cfg).run(BenchRequestSource.of("list", reqs));
      assertThat(run.outcomes()).hasSize(1);
      assertThat(server.received()).isEqualTo(1);
    }
  }

  private static BenchRun runQuietly(BenchRunner runner, BenchRequestSource source) {
    try {
      return runner.run(source);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static BenchRequestSource signallingWhenExhausted(
      BenchRequestSource inner, CountDownLatch latch) {
    return new BenchRequestSource() {
      @Override
      public String name() {
        return inner.name();
      }

      @Override
      public boolean hasNext() {
        boolean more = inner.hasNext();
        if (!more) {
          latch.countDown();
        }
        return more;
      }

      @Override
      public BenchRequest next() {
        return inner.next();
      }
    };
  }
}

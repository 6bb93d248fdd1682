package io.kvrouter.systemtest.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.loadtest.bench.ArrivalSchedule;
import io.kvrouter.loadtest.bench.BenchConfig;
import io.kvrouter.loadtest.bench.BenchRequestSource;
import io.kvrouter.loadtest.bench.BenchRun;
import io.kvrouter.loadtest.bench.BenchRunner;
import io.kvrouter.loadtest.bench.BenchSummary;
import io.kvrouter.loadtest.bench.SyntheticWorkloads;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The drain and the rolling restart, with real processes from the fat jar on distinct loopback
 * addresses (agent and its simulated engines on 127.0.0.4, ingresses on 127.0.0.2 and 127.0.0.3),
 * as separate hosts would run them.
 *
 * <p>Every node gets {@code kvrouter.node.drain.unready-delay = 3s}: after SIGTERM an ingress
 * answers {@code /ready} with 503 and keeps serving for three seconds, far longer than the test's
 * load balancer (the bench's {@code followReadiness}, polling every 100 ms) takes to stop sending
 * it new requests even on a loaded machine, then it unbinds, lets streams in flight finish and
 * leaves the cluster.
 *
 * <p>Like Envoy ({@code retry_on: connect-failure}) the bench resends a request whose connection
 * was refused to the next ready ingress: no ingress accepted it. Every request an ingress accepted
 * must be answered in full; how many were resent is printed.
 */
class DrainAndRollIT {

  static final String AGENT_HOST = "127.0.0.4";
  static final String CONFIG = "kvrouter.node.drain { unready-delay = 3s, grace-period = 30s }\n";

  @Test
  void sigtermWithStreamsInFlight_letsThemFinish_thenTheIngressLeaves() throws Exception {
    try (NodeProcesses nodes = new NodeProcesses(CONFIG)) {
      // Slow engines: each stream of 40 tokens takes a few seconds.
      nodes.agent(AGENT_HOST, 1, 0.05);
      NodeProcesses.Ingress draining = nodes.ingress("127.0.0.2", 0);
      NodeProcesses.Ingress other = nodes.ingress("127.0.0.3", 0);
      nodes.awaitReady(draining, 1);
      nodes.awaitReady(other, 1);
      assertThat(
              MultiProcessClusterIT.get(draining.url() + "/admin/replicas")
                  .get(0)
                  .path("url")
                  .asText())
          .as("the simulated engine binds and is announced on the agent's address")
          .startsWith("http://" + AGENT_HOST + ":");

      List<Stream> streams = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        streams.add(Stream.open(draining.url(), i, 40));
      }
      for (Stream s : streams) {
        assertThat(s.firstChunk.await(60, TimeUnit.SECONDS)).as("first chunk of a stream").isTrue();
      }

      draining.process().destroy(); // SIGTERM
      AtomicBoolean unreadyWhileStreaming = new AtomicBoolean();
      nodes
          .kit
          .createTestProbe()
          .awaitAssert(
              Duration.ofSeconds(20),
              Duration.ofMillis(50),
              () -> {
                boolean streaming = streams.stream().anyMatch(s -> !s.done.isDone());
                int ready = NodeProcesses.status(draining.url() + "/ready");
                if (ready != 200 && streaming) {
                  unreadyWhileStreaming.set(true);
                }
                assertThat(ready).isNotEqualTo(200);
                return null;
              });
      for (Stream s : streams) {
        String outcome = s.done.get(60, TimeUnit.SECONDS);
        assertThat(outcome).as(nodes.logs()).isEqualTo("done");
        assertThat(s.tokens).as("every token of the stream arrived").isEqualTo(40);
      }
      assertThat(unreadyWhileStreaming)
          .as("/ready turned 503 while the streams were still running")
          .isTrue();
      assertThat(draining.process().waitFor(60, TimeUnit.SECONDS))
          .as("the drained ingress exits")
          .isTrue();
      assertThat(NodeProcesses.status(draining.url() + "/health")).isEqualTo(-1);

      // The other ingress saw it leave: its tracker holds no reservation of the drained one.
      nodes
          .kit
          .createTestProbe()
          .awaitAssert(
              Duration.ofSeconds(60),
              Duration.ofMillis(500),
              () -> {
                var view = MultiProcessClusterIT.get(other.url() + "/admin/consistency");
                assertThat(view.path("trackers").size()).as(view.toString()).isEqualTo(1);
                assertThat(
                        MultiProcessClusterIT.get(other.url() + "/admin/replicas")
                            .get(0)
                            .path("in_flight")
                            .asInt())
                    .isZero();
                return null;
              });
    }
  }

  @Test
  void rollingRestartOfBothIngressesUnderABench_losesNoRequest() throws Exception {
    try (NodeProcesses nodes = new NodeProcesses(CONFIG)) {
      nodes.agent(AGENT_HOST, 2, 1.0);
      NodeProcesses.Ingress a = nodes.ingress("127.0.0.2", 0);
      NodeProcesses.Ingress b = nodes.ingress("127.0.0.3", 0);
      nodes.awaitReady(a, 2);
      nodes.awaitReady(b, 2);

      AtomicBoolean enough = new AtomicBoolean();
      BenchRequestSource workload =
          SyntheticWorkloads.sharedPrefix(8, 1000, 200, 20, 32, ArrivalSchedule.poisson(6, 7), 7);
      BenchRequestSource source = NodeProcesses.until(workload, enough);
      BenchRunner runner =
          new BenchRunner(
                  BenchConfig.defaults(
                          List.of(URI.create(a.url()), URI.create(b.url())), "kvrouter-demo")
                      .withLimits(-1, Duration.ofMinutes(8), 256, Duration.ofSeconds(60)))
              .followReadiness(Duration.ofMillis(100));
      CompletableFuture<BenchRun> run =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return runner.run(source);
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
              });

      awaitMoreOk(nodes, runner, 30);
      System.out.printf("restarting %s at %.3f s%n", a.url(), runner.counters().elapsedSeconds());
      NodeProcesses.Ingress a2 = restart(nodes, a);
      awaitMoreOk(nodes, runner, 30);
      System.out.printf("restarting %s at %.3f s%n", b.url(), runner.counters().elapsedSeconds());
      NodeProcesses.Ingress b2 = restart(nodes, b);
      awaitMoreOk(nodes, runner, 30);
      enough.set(true);
      BenchRun done = run.get(120, TimeUnit.SECONDS);

      BenchSummary summary = BenchSummary.of(done, "DrainAndRollIT");
      System.out.printf(
          "rolling restart: %d requests in %.1f s, %d ok, %d errors, %d timeouts, %d dropped;"
              + " TTFT p50 %.1f ms p99 %.1f ms; %d resent after a refused connection;"
              + " per target %s%n",
          summary.counts().sent(),
          summary.durationSeconds(),
          summary.counts().ok(),
          summary.counts().errors(),
          summary.counts().timeouts(),
          summary.counts().dropped(),
          summary.latencyMs().ttft().uncorrected().p50(),
          summary.latencyMs().ttft().uncorrected().p99(),
          runner.connectRetries(),
          summary.targets());
      done.outcomes().stream()
          .filter(o -> o.status() != io.kvrouter.loadtest.bench.RequestOutcome.Status.OK)
          .forEach(
              o ->
                  System.out.printf(
                      "failed: target %d at %.3f s: %s %s%n",
                      o.target(), o.sentNanos() / 1e9, o.status(), o.error()));
      assertThat(summary.counts().ok())
          .as("every request answered in full: %s%n%s", summary.errorSamples(), nodes.logs())
          .isEqualTo(summary.counts().total());
      assertThat(summary.counts().total()).isGreaterThanOrEqualTo(90);
      assertThat(a2.process().isAlive() && b2.process().isAlive()).isTrue();
    }
  }

  /** SIGTERM, wait for the exit, start again on the same address and HTTP port, wait ready. */
  private static NodeProcesses.Ingress restart(NodeProcesses nodes, NodeProcesses.Ingress old)
      throws Exception {
    old.process().destroy();
    assertThat(old.process().waitFor(90, TimeUnit.SECONDS)).as("drained ingress exits").isTrue();
    NodeProcesses.Ingress fresh = nodes.ingress(old.host(), old.httpPort());
    nodes.awaitReady(fresh, 2);
    return fresh;
  }

  private static void awaitMoreOk(NodeProcesses nodes, BenchRunner runner, int more) {
    long target = runner.counters().ok() + more;
    nodes
        .kit
        .createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(60),
            Duration.ofMillis(200),
            () -> {
              assertThat(runner.counters().ok()).isGreaterThanOrEqualTo(target);
              return null;
            });
  }

  /** One streaming completion read line by line on its own thread. */
  static final class Stream {
    final CountDownLatch firstChunk = new CountDownLatch(1);
    final CompletableFuture<String> done = new CompletableFuture<>();
    volatile int tokens;

    static Stream open(String ingress, int i, int maxTokens) {
      Stream s = new Stream();
      String body =
          "{\"model\":\"kvrouter-demo\",\"prompt\":\"drain stream "
              + i
              + " with a prompt long enough for a block or two of sixteen tokens each\","
              + "\"max_tokens\":"
              + maxTokens
              + ",\"stream\":true}";
      AtomicReference<Thread> reader = new AtomicReference<>();
      MultiProcessClusterIT.HTTP
          .sendAsync(
              HttpRequest.newBuilder(URI.create(ingress + "/v1/completions"))
                  .timeout(Duration.ofSeconds(120))
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString(body))
                  .build(),
              HttpResponse.BodyHandlers.ofInputStream())
          .whenComplete(
              (r, e) -> {
                if (e != null) {
                  s.done.complete("failed: " + e);
                  return;
                }
                Thread t = new Thread(() -> s.read(r), "drain-stream-" + i);
                reader.set(t);
                t.start();
              });
      return s;
    }

    private void read(HttpResponse<java.io.InputStream> r) {
      if (r.statusCode() != 200) {
        done.complete("status " + r.statusCode());
        return;
      }
      try (BufferedReader in =
          new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = in.readLine()) != null) {
          if (!line.startsWith("data: ")) {
            continue;
          }
          String data = line.substring(6).trim();
          if (data.equals("[DONE]")) {
            done.complete("done");
            return;
          }
          if (data.contains("\"error\"")) {
            done.complete("error frame: " + data);
            return;
          }
          if (data.contains("\"text\"")) {
            tokens++; // a usage chunk, when the ingress asks for one, carries no text
          }
          firstChunk.countDown();
        }
        done.complete("ended without [DONE] after " + tokens + " tokens");
      } catch (Exception e) {
        done.complete("read failed after " + tokens + " tokens: " + e);
      }
    }
  }
}

package io.kvrouter.systemtest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.sim.SimEngine;
import io.kvrouter.testing.LoopbackHttp;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;

/**
 * Two ingresses and one agent with simulated engines, for the traffic management tests: chat
 * requests with headers through either ingress, and each engine's own account of what it served
 * ({@code /sim/requests}), so a test can tell which replica took a request without asking the
 * router.
 */
final class TrafficCluster implements AutoCloseable {

  final ClusterHarness harness;
  final ActorTestKit kit;
  final List<SimEngine> engines;

  private TrafficCluster(ClusterHarness harness, ActorTestKit kit, List<SimEngine> engines) {
    this.harness = harness;
    this.kit = kit;
    this.engines = engines;
  }

  /**
   * Starts two ingresses with {@code ingressConfig} (HOCON) and {@code engineCount} engines of
   * agent {@code sim} at {@code speedup}, and waits until both ingresses route to all of them.
   */
  static TrafficCluster start(String ingressConfig, int engineCount, double speedup)
      throws Exception {
    ClusterHarness harness = new ClusterHarness(speedup);
    try {
      harness.addIngress(ConfigFactory.parseString(ingressConfig));
      harness.addIngress(ConfigFactory.parseString(ingressConfig));
      harness.startAgent("sim", engineCount);
      ActorTestKit kit = ActorTestKit.create(harness.ingresses().get(0).system());
      TrafficCluster c = new TrafficCluster(harness, kit, harness.agent("sim").fleet().engines());
      c.await(
          Duration.ofSeconds(90),
          () -> {
            for (ClusterHarness.Ingress i : harness.ingresses()) {
              assertThat(LoopbackHttp.status(i.url() + "/ready")).isEqualTo(200);
              assertThat(LoopbackHttp.getJson(i.url() + "/admin/replicas").size())
                  .isEqualTo(engineCount);
            }
            return null;
          });
      return c;
    } catch (Exception | AssertionError e) {
      harness.close();
      throw e;
    }
  }

  String url(int ingress) {
    return harness.ingresses().get(ingress % 2).url();
  }

  /** A chat request body with one user message. */
  static String chat(String content, int maxTokens, boolean stream) {
    ObjectNode body = LoopbackHttp.JSON.createObjectNode();
    body.put("model", ClusterHarness.MODEL);
    body.put("max_tokens", maxTokens);
    body.put("stream", stream);
    body.putArray("messages").addObject().put("role", "user").put("content", content);
    return body.toString();
  }

  HttpRequest request(int ingress, String body, Map<String, String> headers) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(url(ingress) + "/v1/chat/completions"))
            .timeout(Duration.ofSeconds(120))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    headers.forEach(b::header);
    return b.build();
  }

  HttpResponse<String> send(int ingress, String body, Map<String, String> headers)
      throws Exception {
    return LoopbackHttp.CLIENT.send(
        request(ingress, body, headers), HttpResponse.BodyHandlers.ofString());
  }

  CompletableFuture<HttpResponse<String>> sendAsync(
      int ingress, String body, Map<String, String> headers) {
    return LoopbackHttp.CLIENT.sendAsync(
        request(ingress, body, headers), HttpResponse.BodyHandlers.ofString());
  }

  /** The requests engine {@code e} has started so far (its log's last sequence number). */
  long served(int e) throws Exception {
    JsonNode list = log(e);
    return list.isEmpty() ? 0 : list.get(list.size() - 1).path("seq").asLong();
  }

  /** Engine {@code e}'s log of its latest requests, oldest first. */
  JsonNode log(int e) throws Exception {
    return LoopbackHttp.getJson(engines.get(e).baseUrl() + "/sim/requests").path("requests");
  }

  long[] servedByEach() throws Exception {
    long[] out = new long[engines.size()];
    for (int e = 0; e < out.length; e++) {
      out[e] = served(e);
    }
    return out;
  }

  /** The one engine whose count grew by one between two snapshots (sequential requests). */
  static int servedBy(long[] before, long[] after) {
    int which = -1;
    for (int e = 0; e < before.length; e++) {
      if (after[e] != before[e]) {
        assertThat(after[e] - before[e]).as("engine %d", e).isEqualTo(1);
        assertThat(which).as("one engine served it").isEqualTo(-1);
        which = e;
      }
    }
    assertThat(which).as("some engine served it").isNotEqualTo(-1);
    return which;
  }

  /** A Prometheus sample sum of ingress {@code i}. */
  double metric(int ingress, String... names) throws Exception {
    return LoopbackHttp.metric(url(ingress), names);
  }

  /**
   * The sum of ingress {@code i}'s samples of {@code name} whose {@code label} is {@code value}.
   */
  double metric(int ingress, String name, String label, String value) throws Exception {
    return io.kvrouter.protocol.metrics.PrometheusText.parse(
            LoopbackHttp.get(url(ingress) + "/metrics").body())
        .samples()
        .stream()
        .filter(s -> s.name().equals(name) && value.equals(s.labels().get(label)))
        .mapToDouble(io.kvrouter.protocol.metrics.PrometheusText.Sample::value)
        .sum();
  }

  /** Polls {@code check} until it passes or {@code max} has passed. */
  <T> T await(Duration max, Callable<T> check) {
    return kit.createTestProbe()
        .awaitAssert(
            max,
            Duration.ofMillis(100),
            () -> {
              try {
                return check.call();
              } catch (AssertionError e) {
                throw e;
              } catch (Exception e) {
                throw new AssertionError(e);
              }
            });
  }

  @Override
  public void close() {
    harness.close();
  }
}

package io.kvrouter.ingress.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.routing.Target;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.testing.LoopbackHttp;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class IngressProxyTest {

  static final ObjectMapper JSON = new ObjectMapper();
  static ActorTestKit kit;
  static TokenizerRegistry tokenizers;

  FakeRouter router;
  IngressMetrics metrics;
  ServerBinding binding;
  HttpClient client = HttpClient.newHttpClient();

  @BeforeAll
  static void startKit() {
    kit = ActorTestKit.create();
    tokenizers = TokenizerRegistry.fromConfig(ConfigFactory.load());
  }

  @AfterAll
  static void stopKit() {
    kit.shutdownTestKit();
    tokenizers.close();
  }

  @BeforeEach
  void start() throws Exception {
    router = new FakeRouter();
    metrics = new IngressMetrics();
    IngressSettings settings =
        IngressSettings.fromConfig(
                ConfigFactory.parseString(
                        "kvrouter.ingress { http.host = 127.0.0.1, first-byte-timeout = 5s, max-body-bytes = 64k,"
                            + " queue { capacity = 1, max-wait = 2s, recheck = 20ms } }")
                    .withFallback(ConfigFactory.load()))
            .withPort(0);
    AdminView admin = new StaticAdminView();
    binding =
        IngressFrontend.start(kit.system(), settings, tokenizers, router, metrics, admin)
            .toCompletableFuture()
            .get();
  }

  @AfterEach
  void stop() throws Exception {
    binding.unbind().toCompletableFuture().get();
  }

  String url(String path) {
    return "http://127.0.0.1:" + binding.localAddress().getPort() + path;
  }

  HttpResponse<String> post(String path, String body) throws Exception {
    return LoopbackHttp.post(url(path), body);
  }

  /** Sends a POST without waiting for its answer (a request that is to wait in the queue). */
  CompletableFuture<HttpResponse<String>> postAsync(String path, String body) {
    return client.sendAsync(
        HttpRequest.newBuilder(URI.create(url(path)))
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** Metrics are updated when the stream ends, after the client may already have its answer. */
  void awaitMetric(String line) {
    ProxyAwait.metric(kit, metrics, line);
  }

  void awaitNoOpenReservations() {
    ProxyAwait.noOpenReservations(kit, router);
  }

  @Test
  void completion_isForwardedWithTokenIds_andReservationReleasedOnce() throws Exception {
    try (FakeEngine engine = new FakeEngine(FakeEngine.Mode.OK)) {
      router.targets.add(new Target("r0", engine.url(), true));
      HttpResponse<String> r =
          post(
              "/v1/completions",
              "{\"model\":\"kvrouter-demo\",\"prompt\":\"Hello there\",\"max_tokens\":4}");
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      assertThat(JSON.readTree(r.body()).path("choices").path(0).path("text").asText())
          .isEqualTo("hello world");
      JsonNode sent = JSON.readTree(engine.bodies.get(0));
      assertThat(sent.get("prompt").isArray()).as("token ids forwarded").isTrue();
      int[] expected = tokenizers.get("kvrouter-demo").encodePrompt("Hello there");
      assertThat(sent.get("prompt").size()).isEqualTo(expected.length);
      assertThat(router.prefills).hasSize(1);
      assertThat(router.releases).containsExactlyElementsOf(router.prefills);
      assertThat(router.open).isEmpty();
    }
  }

  @Test
  void textPrompt_staysTextForReplicasWithoutTokenIdSupport() throws Exception {
    try (FakeEngine engine = new FakeEngine(FakeEngine.Mode.OK)) {
      router.targets.add(new Target("r0", engine.url(), false));
      post(
          "/v1/completions",
          "{\"model\":\"kvrouter-demo\",\"prompt\":\"Hello there\",\"max_tokens\":4}");
      assertThat(JSON.readTree(engine.bodies.get(0)).get("prompt").asText())
          .isEqualTo("Hello there");
    }
  }

  @Test
  void streamingChat_isRelayedChunkByChunk_andReleasedOnce() throws Exception {
    try (FakeEngine engine = new FakeEngine(FakeEngine.Mode.OK)) {
      router.targets.add(new Target("r0", engine.url(), true));
      HttpResponse<String> r =
          post(
              "/v1/chat/completions",
              "{\"model\":\"kvrouter-demo\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      assertThat(r.headers().firstValue("content-type").orElse("")).startsWith("text/event-stream");
      assertThat(r.body())
          .contains("\"hello\"")
          .contains("\" world\"")
          .endsWith("data: [DONE]\n\n");
      awaitNoOpenReservations();
      assertThat(router.releases).hasSize(1);
      assertThat(router.prefills).hasSize(1);
      awaitMetric("kvrouter_engine_cached_tokens_total 3.0");
    }
  }

  @Test
  void replicaAnswering5xx_isRetriedOnTheNextReplica() throws Exception {
    try (FakeEngine bad = new FakeEngine(FakeEngine.Mode.FAIL_500);
        FakeEngine good = new FakeEngine(FakeEngine.Mode.OK)) {
      router.targets.add(new Target("bad", bad.url(), true));
      router.targets.add(new Target("good", good.url(), true));
      HttpResponse<String> r =
          post(
              "/v1/completions",
              "{\"model\":\"kvrouter-demo\",\"prompt\":\"Hello\",\"max_tokens\":4}");
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      assertThat(router.queries).hasSize(2);
      assertThat(router.releases).hasSize(2);
      assertThat(router.open).isEmpty();
      assertThat(metrics.scrape()).contains("kvrouter_retries_total 1.0");
    }
  }

  @Test
  void replicaClosingTheConnection_isRetriedOnTheNextReplica_forStreamsToo() throws Exception {
    try (FakeEngine dead = new FakeEngine(FakeEngine.Mode.CLOSE);
        FakeEngine good = new FakeEngine(FakeEngine.Mode.OK)) {
      router.targets.add(new Target("dead", dead.url(), true));
      router.targets.add(new Target("good", good.url(), true));
      HttpResponse<String> r =
          post(
              "/v1/completions",
              "{\"model\":\"kvrouter-demo\",\"prompt\":\"Hello\",\"stream\":true}");
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      assertThat(r.body()).endsWith("data: [DONE]\n\n");
      awaitNoOpenReservations();
      assertThat(router.releases).hasSize(2);
    }
  }

  @Test
  void everyReplicaFailing_beforeTheAttemptsRunOut_gives503NamingTheLastFailure() throws Exception {
    try (FakeEngine a = new FakeEngine(FakeEngine.Mode.FAIL_500);
        FakeEngine b = new FakeEngine(FakeEngine.Mode.FAIL_500)) {
      router.targets.add(new Target("a", a.url(), true));
      router.targets.add(new Target("b", b.url(), true));
      HttpResponse<String> r =
          post("/v1/completions", "{\"model\":\"kvrouter-demo\",\"prompt\":\"Hello\"}");
      assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
      JsonNode error = JSON.readTree(r.body()).path("error");
      assertThat(error.path("type").asText()).isEqualTo("server_error");
      assertThat(error.path("message").asText()).contains("last failure: replica b answered 500");
      assertThat(router.queries).hasSize(3);
      assertThat(router.open).isEmpty();
    }
  }

  @Test
  void everyAttemptFailing_gives502_andLeavesNoReservation() throws Exception {
    try (FakeEngine a = new FakeEngine(FakeEngine.Mode.FAIL_500);
        FakeEngine b = new FakeEngine(FakeEngine.Mode.FAIL_500);
        FakeEngine c = new FakeEngine(FakeEngine.Mode.FAIL_500);
        FakeEngine d = new FakeEngine(FakeEngine.Mode.OK)) {
      for (FakeEngine e : List.of(a, b, c, d)) {
        router.targets.add(new Target("r" + router.targets.size(), e.url(), true));
      }
      HttpResponse<String> r =
          post("/v1/completions", "{\"model\":\"kvrouter-demo\",\"prompt\":\"Hello\"}");
      assertThat(r.statusCode()).as(r.body()).isEqualTo(502);
      JsonNode error = JSON.readTree(r.body()).path("error");
      assertThat(error.path("type").asText()).isEqualTo("server_error");
      assertThat(error.path("message").asText()).contains("after 3 attempts");
      assertThat(router.releases).hasSize(3);
      assertThat(router.open).isEmpty();
      assertThat(d.bodies).as("the fourth replica is never tried").isEmpty();
    }
  }

  @Test
  void failureAfterTheFirstByte_withNoReplicaToMoveTo_reachesTheClientAsAnErrorFrame()
      throws Exception {
    try (FakeEngine engine = new FakeEngine(FakeEngine.Mode.BREAK_MID_STREAM)) {
      router.targets.add(new Target("r0", engine.url(), true));
      HttpResponse<String> r =
          post(
              "/v1/completions",
              "{\"model\":\"kvrouter-demo\",\"prompt\":\"Hello\",\"stream\":true}");
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      assertThat(r.body()).contains("\"hello\"").contains("\"error\"");
      awaitNoOpenReservations();
      // The stream looked for a replica to move to (StreamMigration), and there was none.
      assertThat(router.queries).hasSize(2);
      assertThat(router.queries.get(1)).endsWith("#m1.1");
      awaitMetric("kvrouter_migrations_total{outcome=\"failed\"} 1.0");
    }
  }

  @Test
  void clientDisconnectMidStream_releasesTheReservation() throws Exception {
    try (FakeEngine engine = new FakeEngine(FakeEngine.Mode.DRIP)) {
      router.targets.add(new Target("r0", engine.url(), true));
      String body = "{\"model\":\"kvrouter-demo\",\"prompt\":\"Hello\",\"stream\":true}";
      try (Socket socket = new Socket("127.0.0.1", binding.localAddress().getPort())) {
        socket
            .getOutputStream()
            .write(
                ("POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                        + "Content-Length: "
                        + body.length()
                        + "\r\n\r\n"
                        + body)
                    .getBytes(StandardCharsets.UTF_8));
        InputStream in = socket.getInputStream();
        String seen = "";
        while (!seen.contains("hello")) {
          int b = in.read();
          assertThat(b).as("stream open").isNotNegative();
          seen += (char) b;
        }
        assertThat(router.open).hasSize(1);
      }
      awaitNoOpenReservations();
      assertThat(router.releases).hasSize(1);
    }
  }

  @Test
  void anthropicMessages_areTranslatedBothWays() throws Exception {
    try (FakeEngine engine = new FakeEngine(FakeEngine.Mode.OK)) {
      router.targets.add(new Target("r0", engine.url(), true));
      HttpResponse<String> r =
          post(
              "/v1/messages",
              "{\"model\":\"kvrouter-demo\",\"max_tokens\":16,\"system\":\"be brief\","
                  + "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}]}");
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      JsonNode msg = JSON.readTree(r.body());
      assertThat(msg.path("type").asText()).isEqualTo("message");
      assertThat(msg.path("content").path(0).path("text").asText()).isEqualTo("hello world");
      assertThat(msg.path("stop_reason").asText()).isEqualTo("end_turn");
      JsonNode sent = JSON.readTree(engine.bodies.get(0));
      assertThat(sent.path("messages").path(0).path("role").asText()).isEqualTo("system");
      assertThat(sent.path("messages").path(1).path("content").asText()).isEqualTo("hi");

      HttpResponse<String> s =
          post(
              "/v1/messages",
              "{\"model\":\"kvrouter-demo\",\"max_tokens\":16,\"stream\":true,"
                  + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
      assertThat(s.body())
          .startsWith("event: message_start")
          .contains("event: content_block_delta")
          .contains("\"text\":\"hello\"")
          .contains("event: message_delta")
          .endsWith("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
      awaitNoOpenReservations();
    }
  }

  @Test
  void busyEverywhere_waitsInTheQueueThenGets429WithRetryAfter() throws Exception {
    router.targets.add(new Target("r0", "http://127.0.0.1:9", true));
    router.busy = true;
    HttpResponse<String> r =
        post("/v1/completions", "{\"model\":\"kvrouter-demo\",\"prompt\":\"Hello\"}");
    assertThat(r.statusCode()).isEqualTo(429);
    assertThat(r.headers().firstValue("retry-after")).isPresent();
    assertThat(JSON.readTree(r.body()).path("error").path("code").asText())
        .isEqualTo("rate_limit_exceeded");
    assertThat(router.queries.size()).as("asked again while queued").isGreaterThan(2);
  }

  @Test
  void queuedRequest_isPlacedWhenAReplicaFreesUp_andAFullQueueAnswers429AtOnce() throws Exception {
    try (FakeEngine engine = new FakeEngine(FakeEngine.Mode.OK)) {
      router.targets.add(new Target("r0", engine.url(), true));
      router.busy = true;
      CompletableFuture<HttpResponse<String>> first =
          postAsync("/v1/completions", "{\"model\":\"kvrouter-demo\",\"prompt\":\"Hi\"}");
      kit.createTestProbe()
          .awaitAssert(
              Duration.ofSeconds(5),
              () -> {
                assertThat(router.queries.size()).isGreaterThanOrEqualTo(2);
                return null;
              });
      HttpResponse<String> second =
          post("/v1/completions", "{\"model\":\"kvrouter-demo\",\"prompt\":\"Hi\"}");
      assertThat(second.statusCode()).isEqualTo(429);
      assertThat(second.body()).contains("queue is full");

      router.busy = false;
      assertThat(first.get().statusCode()).isEqualTo(200);
      assertThat(router.open).isEmpty();
    }
  }

  @Test
  void queuedRequestWhoseRouterFails_givesItsPlaceInTheQueueBack() throws Exception {
    router.targets.add(new Target("r0", "http://127.0.0.1:9", true));
    router.busy = true;
    CompletableFuture<HttpResponse<String>> first =
        postAsync("/v1/completions", "{\"model\":\"kvrouter-demo\",\"prompt\":\"Hi\"}");
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(5),
            () -> {
              assertThat(router.queries.size()).as("queued and asked again").isGreaterThan(1);
              return null;
            });
    router.failure = new IllegalStateException("the tracker did not answer");
    assertThat(first.get().statusCode()).isGreaterThanOrEqualTo(500);

    router.failure = null;
    HttpResponse<String> second =
        post("/v1/completions", "{\"model\":\"kvrouter-demo\",\"prompt\":\"Hi\"}");
    assertThat(second.statusCode()).isEqualTo(429);
    assertThat(second.body()).as("the one place is free again").contains("waited");
  }

  @Test
  void noReplicaServingTheModel_gives503() throws Exception {
    HttpResponse<String> r =
        post("/v1/completions", "{\"model\":\"kvrouter-demo\",\"prompt\":\"Hello\"}");
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.headers().firstValue("retry-after")).isPresent();
  }

  @Test
  void modelsHealthMetricsAndUnknownRoutes() throws Exception {
    router.targets.add(new Target("r0", "http://127.0.0.1:9", true));
    HttpResponse<String> models =
        client.send(
            HttpRequest.newBuilder(URI.create(url("/v1/models"))).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(JSON.readTree(models.body()).path("data").path(0).path("id").asText())
        .isEqualTo("kvrouter-demo");
    HttpResponse<String> health =
        client.send(
            HttpRequest.newBuilder(URI.create(url("/health"))).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(health.statusCode()).isEqualTo(200);
    HttpResponse<String> nope =
        client.send(
            HttpRequest.newBuilder(URI.create(url("/v2/nothing"))).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(nope.statusCode()).isEqualTo(404);
    assertThat(JSON.readTree(nope.body()).path("error").path("code").asText())
        .isEqualTo("not_found");
    String metricsText =
        client
            .send(
                HttpRequest.newBuilder(URI.create(url("/metrics"))).build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    assertThat(metricsText)
        .contains("kvrouter_decision_seconds")
        .contains("kvrouter_retries_total");
  }
}

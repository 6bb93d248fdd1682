package io.kvrouter.ingress.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.routing.Target;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.ingress.tracing.Tracing;
import io.kvrouter.ingress.tracing.TracingSettings;
import io.kvrouter.sim.MockerTimingModel;
import io.kvrouter.sim.SimEngine;
import io.kvrouter.sim.SimEngineConfig;
import io.kvrouter.sim.SimEngineSettings;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Traces through a real ingress front to a simulated engine: the spans the SDK's in-memory exporter
 * collects form the request's tree (continuing the client's trace), and the engine receives the
 * traceparent of the ingress's call to it; with tracing off the client's traceparent reaches the
 * engine unchanged and nothing is recorded.
 */
class RequestTracingTest {

  static final ObjectMapper JSON = new ObjectMapper();
  static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
  static final String CLIENT_SPAN = "00f067aa0ba902b7";
  static final String TRACEPARENT = "00-" + TRACE_ID + "-" + CLIENT_SPAN + "-01";
  static ActorTestKit kit;
  static TokenizerRegistry tokenizers;
  static SimEngine engine;

  final FakeRouter router = new FakeRouter();
  final HttpClient client = HttpClient.newHttpClient();
  final InMemorySpanExporter spans = InMemorySpanExporter.create();
  ServerBinding binding;

  @BeforeAll
  static void startAll() throws Exception {
    kit = ActorTestKit.create();
    tokenizers = TokenizerRegistry.fromConfig(ConfigFactory.load());
    engine =
        SimEngine.start(
            SimEngineSettings.loopback()
                .withModel("kvrouter-demo")
                .withEndpoints(0, null, null)
                .withEngine(
                    SimEngineConfig.defaults()
                        .withNumBlocks(1024)
                        .withTiming(new MockerTimingModel(20))));
  }

  @AfterAll
  static void stopAll() {
    engine.close();
    kit.shutdownTestKit();
    tokenizers.close();
  }

  @AfterEach
  void stop() throws Exception {
    if (binding != null) {
      binding.unbind().toCompletableFuture().get();
    }
  }

  void startIngress(boolean tracing) throws Exception {
    router.targets.add(new Target("sim-0", engine.baseUrl(), true));
    binding =
        TrafficFront.start(
            kit,
            tokenizers,
            router,
            new IngressMetrics(),
            tracing ? Tracing.exportingTo(spans, "kvrouter-test") : Tracing.off());
  }

  CompletableFuture<HttpResponse<String>> streamChat() {
    String body =
        "{\"model\":\"kvrouter-demo\",\"stream\":true,\"max_tokens\":4,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"trace me "
            + System.nanoTime()
            + "\"}]}";
    return client.sendAsync(
        HttpRequest.newBuilder(
                URI.create(
                    "http://127.0.0.1:"
                        + binding.localAddress().getPort()
                        + "/v1/chat/completions"))
            .header("Content-Type", "application/json")
            .header("traceparent", TRACEPARENT)
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** The traceparent the engine saw with its newest request. */
  static String engineTraceparent() throws Exception {
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(engine.baseUrl() + "/sim/requests")).build(),
                HttpResponse.BodyHandlers.ofString());
    JsonNode list = JSON.readTree(r.body()).path("requests");
    return list.get(list.size() - 1).path("traceparent").asText(null);
  }

  /** Waits until the request span has ended (it ends with the stream's last byte). */
  Map<String, SpanData> awaitTree() {
    return kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(10),
            () -> {
              List<SpanData> done = spans.getFinishedSpanItems();
              assertThat(done).anyMatch(s -> s.getKind() == SpanKind.SERVER);
              return done.stream()
                  .collect(Collectors.toMap(SpanData::getName, Function.identity(), (a, b) -> a));
            });
  }

  @Test
  void requestSpan_continuesTheClientsTrace_withAChildPerPhase_andTheEngineGetsTheCallsContext()
      throws Exception {
    startIngress(true);
    router.busy = true; // the request waits in the router queue first
    CompletableFuture<HttpResponse<String>> response = streamChat();
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(10),
            () -> {
              assertThat(router.queries).isNotEmpty();
              return null;
            });
    router.busy = false;
    HttpResponse<String> r = response.get();
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(r.body()).contains("[DONE]");

    Map<String, SpanData> byName = awaitTree();
    SpanData root = byName.get("POST /v1/chat/completions");
    assertThat(root).isNotNull();
    assertThat(root.getKind()).isEqualTo(SpanKind.SERVER);
    assertThat(root.getTraceId()).isEqualTo(TRACE_ID);
    assertThat(root.getParentSpanId()).as("child of the client's span").isEqualTo(CLIENT_SPAN);
    assertThat(byName).containsKeys("tokenize", "decide", "queue", "first_byte", "stream");
    for (String phase : List.of("tokenize", "decide", "queue", "first_byte", "stream")) {
      SpanData s = byName.get(phase);
      assertThat(s.getTraceId()).isEqualTo(TRACE_ID);
      assertThat(s.getParentSpanId())
          .as(phase + " is a child of the request")
          .isEqualTo(root.getSpanId());
      assertThat(s.getEndEpochNanos()).isLessThanOrEqualTo(root.getEndEpochNanos());
    }
    SpanData call = byName.get("first_byte");
    assertThat(call.getKind()).isEqualTo(SpanKind.CLIENT);
    assertThat(byName.get("stream").getStartEpochNanos())
        .isGreaterThanOrEqualTo(call.getEndEpochNanos());

    assertThat(engineTraceparent())
        .as("the engine continues the ingress's call, not the client's span")
        .isEqualTo("00-" + TRACE_ID + "-" + call.getSpanId() + "-01");
  }

  @Test
  void tracingOff_forwardsTheClientsTraceparentUnchanged_andRecordsNothing() throws Exception {
    startIngress(false);
    HttpResponse<String> r = streamChat().get();
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(engineTraceparent()).isEqualTo(TRACEPARENT);
    assertThat(spans.getFinishedSpanItems()).isEmpty();
  }

  @Test
  void defaultConfiguration_hasNoEndpoint_soNoExporterExists() {
    TracingSettings defaults = TracingSettings.fromConfig(ConfigFactory.load());
    assertThat(defaults.otlpEndpoint()).isEmpty();
    try (Tracing tracing = Tracing.fromSettings(defaults, "ingress-1")) {
      assertThat(tracing.enabled()).isFalse();
    }
    TracingSettings on =
        TracingSettings.fromConfig(
            ConfigFactory.parseString(
                    "kvrouter.ingress.tracing.otlp-endpoint = \"http://127.0.0.1:4318/\"")
                .withFallback(ConfigFactory.load()));
    assertThat(on.tracesUrl()).isEqualTo("http://127.0.0.1:4318/v1/traces");
  }
}

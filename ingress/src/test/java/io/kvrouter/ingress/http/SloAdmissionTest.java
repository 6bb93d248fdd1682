package io.kvrouter.ingress.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.routing.RouteOutcome;
import io.kvrouter.ingress.routing.Target;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.ingress.tracing.Tracing;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * SLO-aware admission at the ingress, with the tracker's predictions scripted: a request whose TTFT
 * target no replica can meet even idle is refused at once (429 {@code ttft_target_unattainable});
 * one that no replica meets now but an emptier one could waits in the router queue and is routed
 * once a prediction meets what is left of its target; a routed stream's predicted and observed TTFT
 * reach the metrics. The tracker's side (predictions per candidate, no reservation on a miss) is
 * {@code SteeringTest} in kv-tracker.
 */
class SloAdmissionTest {

  static final ObjectMapper JSON = new ObjectMapper();
  static final String TARGET_HEADER = "X-SLO-TTFT-MS";
  static ActorTestKit kit;
  static TokenizerRegistry tokenizers;

  final FakeRouter router = new FakeRouter();
  final IngressMetrics metrics = new IngressMetrics();
  final HttpClient client = HttpClient.newHttpClient();
  FakeEngine engine;
  ServerBinding binding;

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
    engine = new FakeEngine(FakeEngine.Mode.OK);
    router.targets.add(new Target("r0", engine.url(), true));
    binding = TrafficFront.start(kit, tokenizers, router, metrics, Tracing.off());
  }

  @AfterEach
  void stop() throws Exception {
    binding.unbind().toCompletableFuture().get();
    engine.close();
  }

  HttpResponse<String> chat(boolean stream, long targetMillis) throws Exception {
    String body =
        "{\"model\":\"kvrouter-demo\",\"stream\":"
            + stream
            + ",\"max_tokens\":4,\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}";
    return client.send(
        HttpRequest.newBuilder(
                URI.create(
                    "http://127.0.0.1:"
                        + binding.localAddress().getPort()
                        + "/v1/chat/completions"))
            .header("Content-Type", "application/json")
            .header(TARGET_HEADER, Long.toString(targetMillis))
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  double slo(String outcome) {
    Counter c = metrics.registry().find("kvrouter.slo.requests").tag("outcome", outcome).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void aTargetNoReplicaMeetsEvenIdle_isRefusedAtOnce_with429TtftTargetUnattainable()
      throws Exception {
    router.script = t -> new RouteOutcome.SloMiss("no replica meets 500 ms", 900, 800);

    HttpResponse<String> r = chat(false, 500);

    assertThat(r.statusCode()).as(r.body()).isEqualTo(429);
    JsonNode error = JSON.readTree(r.body()).path("error");
    assertThat(error.path("code").asText()).isEqualTo("ttft_target_unattainable");
    assertThat(error.path("message").asText()).contains("idle replica is predicted at 800 ms");
    assertThat(r.headers().firstValue("Retry-After")).isPresent();
    assertThat(router.queries).as("asked once, not queued").hasSize(1);
    assertThat(router.ttftTargets.get(0)).isPositive().isLessThanOrEqualTo(500);
    assertThat(engine.bodies).as("never sent to an engine").isEmpty();
    assertThat(slo("rejected")).isEqualTo(1);
  }

  @Test
  void aTargetMissedNowButAttainable_waitsInTheRouterQueue_andIsRoutedWhenAPredictionMeetsIt()
      throws Exception {
    AtomicInteger asks = new AtomicInteger();
    router.script =
        t ->
            asks.incrementAndGet() < 3
                ? new RouteOutcome.SloMiss("no replica meets the target now", 4000, 20)
                : new RouteOutcome.Routed("slo-" + asks.get(), t, 0, 30);

    HttpResponse<String> r = chat(false, 3000);

    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(asks.get()).as("asked again from the router queue").isEqualTo(3);
    assertThat(router.ttftTargets)
        .as("each ask carries what is left of the target")
        .allSatisfy(left -> assertThat(left).isPositive().isLessThanOrEqualTo(3000))
        .isSortedAccordingTo((a, b) -> Double.compare(b, a));
    assertThat(engine.bodies).hasSize(1);
    assertThat(slo("met")).isEqualTo(1);
    assertThat(slo("rejected")).isZero();
  }

  @Test
  void aRoutedStream_recordsThePredictedAndTheObservedTtft() throws Exception {
    router.script = t -> new RouteOutcome.Routed("stream-1", t, 0, 25);

    HttpResponse<String> r = chat(true, 60_000);

    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(r.body()).contains("[DONE]");
    Timer predicted = metrics.registry().find("kvrouter.ttft.predicted").timer();
    Timer observed = metrics.registry().find("kvrouter.ttft.observed").timer();
    assertThat(predicted).isNotNull();
    assertThat(predicted.count()).isEqualTo(1);
    assertThat(predicted.totalTime(TimeUnit.MILLISECONDS)).isCloseTo(25, offset(0.01));
    assertThat(observed.count()).isEqualTo(1);
    assertThat(observed.totalTime(TimeUnit.MILLISECONDS)).isPositive();
    assertThat(metrics.scrape())
        .contains("kvrouter_ttft_predicted_seconds_count")
        .contains("kvrouter_ttft_observed_seconds_count")
        .contains("kvrouter_ttft_prediction_ratio_count");
    assertThat(slo("met")).isEqualTo(1);
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(10),
            () -> {
              assertThat(router.releases).containsExactly("stream-1");
              return null;
            });
  }
}

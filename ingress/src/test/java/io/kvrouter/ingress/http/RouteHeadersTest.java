package io.kvrouter.ingress.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.routing.Target;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.ingress.tracing.Tracing;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.testing.LoopbackHttp;
import java.net.http.HttpResponse;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every answer says where it went: the replica, its host and port, the predicted cached prompt
 * tokens and the prefill path, for each API, streamed or not, errors included; the prefill hop of a
 * disaggregated request names its prefill replica and is counted by path.
 */
class RouteHeadersTest {

  static final ObjectMapper JSON = new ObjectMapper();
  static final String WORDS = "the quick brown fox jumps over the lazy dog ".repeat(12);

  static ActorTestKit kit;
  static TokenizerRegistry tokenizers;

  FakeRouter router;
  IngressMetrics metrics;
  ServerBinding binding;

  @BeforeAll
  static void startKit() {
    // Prompts of 32 tokens and more take the prefill hop of a disaggregated model, whatever the
    // decode replica holds.
    kit =
        ActorTestKit.create(
            ConfigFactory.parseString(
                    "kvrouter.ingress.pd { skip-prompts-under-tokens = 32,"
                        + " skip-uncached-under-tokens = 0, prefill-timeout = 5s }")
                .withFallback(ConfigFactory.load()));
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
    binding = bind("");
  }

  @AfterEach
  void stop() throws Exception {
    binding.unbind().toCompletableFuture().get();
  }

  private ServerBinding bind(String ingressSettings) throws Exception {
    return TrafficFront.start(kit, tokenizers, router, metrics, Tracing.off(), ingressSettings);
  }

  HttpResponse<String> post(ServerBinding at, String path, String body) throws Exception {
    return LoopbackHttp.post("http://127.0.0.1:" + at.localAddress().getPort() + path, body);
  }

  HttpResponse<String> post(String path, String body) throws Exception {
    return post(binding, path, body);
  }

  static String chat(String content, boolean stream) {
    return "{\"model\":\"kvrouter-demo\",\"stream\":"
        + stream
        + ",\"messages\":[{\"role\":\"user\",\"content\":\""
        + content
        + "\"}]}";
  }

  /** The engine's host and port as its URL names them. */
  static String hostPort(String url) {
    return url.substring("http://".length());
  }

  static String header(HttpResponse<String> r, String name) {
    return r.headers().firstValue(name).orElse(null);
  }

  static void assertWentTo(
      HttpResponse<String> r, String replica, String engineUrl, int predictedCached, String hop) {
    assertThat(header(r, "x-kvrouter-replica")).as(r.body()).isEqualTo(replica);
    assertThat(header(r, "x-kvrouter-endpoint")).isEqualTo(hostPort(engineUrl));
    assertThat(header(r, "x-kvrouter-predicted-cached-tokens"))
        .isEqualTo(Integer.toString(predictedCached));
    assertThat(header(r, "x-kvrouter-hop")).isEqualTo(hop);
  }

  /** A prefill engine that answers its one-token request with NIXL transfer parameters. */
  static ScriptedEngine prefillEngine() throws Exception {
    return new ScriptedEngine()
        .answer(
            "/v1/chat/completions",
            200,
            "application/json",
            "{\"id\":\"p\",\"choices\":[],\"kv_transfer_params\":{\"do_remote_prefill\":true,"
                + "\"do_remote_decode\":false,\"remote_block_ids\":[1,2],\"remote_engine_id\":\"e\","
                + "\"remote_host\":\"10.0.0.9\",\"remote_port\":5600,\"tp_size\":1}}");
  }

  @Test
  void everyApi_streamedOrNot_errorsIncluded_namesItsReplicaEndpointAndPredictedCache()
      throws Exception {
    router.predictedCached = 7;
    try (FakeEngine engine = new FakeEngine(FakeEngine.Mode.OK);
        FakeEngine breaking = new FakeEngine(FakeEngine.Mode.BREAK_MID_STREAM);
        ScriptedEngine refusing =
            new ScriptedEngine()
                .answer(
                    "/v1/chat/completions",
                    400,
                    "application/json",
                    "{\"error\":{\"message\":\"bad temperature\",\"code\":400}}");
        ScriptedEngine responses =
            new ScriptedEngine()
                .answer(
                    ReplicaInfo.RESPONSES_API,
                    200,
                    "application/json",
                    "{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"completed\","
                        + "\"output\":[]}")) {
      router.targets.add(new Target("r0", engine.url(), true));
      for (String body : List.of(chat("hi", false), chat("hi", true))) {
        HttpResponse<String> r = post("/v1/chat/completions", body);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertWentTo(r, "r0", engine.url(), 7, "direct");
        assertThat(header(r, "x-kvrouter-prefill-replica")).isNull();
      }
      HttpResponse<String> completion =
          post(
              "/v1/completions",
              "{\"model\":\"kvrouter-demo\",\"prompt\":\"Hello\",\"max_tokens\":4}");
      assertWentTo(completion, "r0", engine.url(), 7, "direct");
      HttpResponse<String> message =
          post(
              "/v1/messages",
              "{\"model\":\"kvrouter-demo\",\"max_tokens\":8,\"stream\":true,"
                  + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
      assertThat(message.body()).contains("event: message_stop");
      assertWentTo(message, "r0", engine.url(), 7, "direct");

      router.targets.clear();
      router.targets.add(new Target("r1", breaking.url(), true));
      HttpResponse<String> broken =
          post(
              "/v1/completions",
              "{\"model\":\"kvrouter-demo\",\"prompt\":\"Hello\",\"stream\":true}");
      assertThat(broken.body()).as("cut after the first byte").contains("\"error\"");
      assertWentTo(broken, "r1", breaking.url(), 7, "direct");

      router.targets.clear();
      router.targets.add(new Target("r2", refusing.url(), true));
      HttpResponse<String> refused = post("/v1/chat/completions", chat("hi", false));
      assertThat(refused.statusCode()).isEqualTo(400);
      assertWentTo(refused, "r2", refusing.url(), 7, "direct");

      router.targets.clear();
      router.targets.add(
          new Target("r3", responses.url(), true, List.of(ReplicaInfo.RESPONSES_API)));
      HttpResponse<String> response =
          post("/v1/responses", "{\"model\":\"kvrouter-demo\",\"input\":\"Hi\"}");
      assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
      assertWentTo(response, "r3", responses.url(), 7, "direct");
    }
  }

  @Test
  void disaggregatedRequest_namesItsPrefillReplica_andAFailedPrefillSaysItFellBack()
      throws Exception {
    router.disaggregated = true;
    router.predictedCached = 16;
    try (FakeEngine decode = new FakeEngine(FakeEngine.Mode.OK);
        ScriptedEngine prefill = prefillEngine();
        ScriptedEngine failing = new ScriptedEngine()) {
      router.targets.add(new Target("d0", decode.url(), true));
      router.prefillTargets.add(new Target("p0", prefill.url(), true));
      for (boolean stream : new boolean[] {false, true}) {
        HttpResponse<String> r = post("/v1/chat/completions", chat(WORDS, stream));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertWentTo(r, "d0", decode.url(), 16, "prefill_decode");
        assertThat(header(r, "x-kvrouter-prefill-replica")).isEqualTo("p0");
      }
      assertThat(decode.bodies)
          .as("the decode replica got the prefill's transfer parameters")
          .allSatisfy(b -> assertThat(JSON.readTree(b).has("kv_transfer_params")).isTrue());

      router.prefillTargets.clear();
      router.prefillTargets.add(new Target("p1", failing.url(), true));
      HttpResponse<String> fellBack = post("/v1/chat/completions", chat(WORDS, false));
      assertThat(fellBack.statusCode()).as(fellBack.body()).isEqualTo(200);
      assertWentTo(fellBack, "d0", decode.url(), 16, "prefill_fallback");
      assertThat(header(fellBack, "x-kvrouter-prefill-replica"))
          .as("no replica prefilled it but the decode replica")
          .isNull();
    }
  }

  @Test
  void answeredRequests_areCountedOnceEachByPrefillPath() throws Exception {
    try (FakeEngine down = new FakeEngine(FakeEngine.Mode.FAIL_500);
        FakeEngine decode = new FakeEngine(FakeEngine.Mode.OK);
        ScriptedEngine prefill = prefillEngine();
        ScriptedEngine failing = new ScriptedEngine()) {
      router.targets.add(new Target("down", down.url(), true));
      router.targets.add(new Target("d0", decode.url(), true));
      assertThat(post("/v1/chat/completions", chat(WORDS, false)).statusCode()).isEqualTo(200);

      router.targets.remove(0);
      router.disaggregated = true;
      router.prefillTargets.add(new Target("p0", prefill.url(), true));
      assertThat(post("/v1/chat/completions", chat("hi", false)).statusCode()).isEqualTo(200);
      assertThat(post("/v1/chat/completions", chat(WORDS, true)).statusCode()).isEqualTo(200);

      router.prefillTargets.clear();
      router.prefillTargets.add(new Target("p1", failing.url(), true));
      assertThat(post("/v1/chat/completions", chat(WORDS, false)).statusCode()).isEqualTo(200);

      assertThat(metrics.scrape())
          .as("the first request was retried, and counted once")
          .contains("kvrouter_request_hops_total{hop=\"direct\"} 1.0")
          .contains("kvrouter_request_hops_total{hop=\"prefill_skipped\"} 1.0")
          .contains("kvrouter_request_hops_total{hop=\"prefill_decode\"} 1.0")
          .contains("kvrouter_request_hops_total{hop=\"prefill_fallback\"} 1.0");
    }
  }

  @Test
  void routeHeadersOff_answersSayNothingOfWhereTheyWent() throws Exception {
    ServerBinding quiet = bind("route-headers = off");
    try (FakeEngine engine = new FakeEngine(FakeEngine.Mode.OK)) {
      router.targets.add(new Target("r0", engine.url(), true));
      HttpResponse<String> r = post(quiet, "/v1/chat/completions", chat("hi", false));
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      assertThat(r.headers().map().keySet()).noneMatch(h -> h.startsWith("x-kvrouter-"));
    } finally {
      quiet.unbind().toCompletableFuture().get();
    }
  }
}

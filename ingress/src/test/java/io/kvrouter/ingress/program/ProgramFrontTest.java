package io.kvrouter.ingress.program;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.api.ResponseIds;
import io.kvrouter.ingress.api.TemplateInputs;
import io.kvrouter.ingress.http.AdminView;
import io.kvrouter.ingress.http.IngressFrontend;
import io.kvrouter.ingress.http.IngressSettings;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.routing.ReplicaQuery;
import io.kvrouter.ingress.routing.Target;
import io.kvrouter.ingress.tokenize.ModelTokenizer;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.protocol.ReplicaInfo;
import io.micrometer.core.instrument.Counter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Programs through a real ingress HTTP front against loopback engines: which program each API's
 * request belongs to, and the warming of a program's next turn after a reply that ends in a tool
 * call (sent to the turn's replica, skipped without headroom or where the replica serves other
 * requests or where most of the prefix is uncached, cancelled by the next turn).
 */
class ProgramFrontTest {

  static final ObjectMapper JSON = new ObjectMapper();
  static ActorTestKit kit;
  static TokenizerRegistry tokenizers;

  PinningRouter router;
  IngressMetrics metrics;
  ServerBinding binding;
  LoopbackEngine r0;
  LoopbackEngine r1;
  final HttpClient client = HttpClient.newHttpClient();

  static final String TOOLS =
      "[{\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"parameters\":"
          + "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}}}]";

  static final String CHAT =
      "{\"model\":\"kvrouter-demo\",\"max_tokens\":16,\"tools\":"
          + TOOLS
          + ",\"messages\":[{\"role\":\"system\",\"content\":\"You are a coding agent.\"},"
          + "{\"role\":\"user\",\"content\":\"Use read_file on main.py\"}]}";

  static final String TOOL_CALL_ANSWER =
      "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"model\":\"kvrouter-demo\",\"choices\":"
          + "[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":"
          + "[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"read_file\","
          + "\"arguments\":\"{\\\"path\\\": \\\"main.py\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}],"
          + "\"usage\":{\"prompt_tokens\":60,\"completion_tokens\":9,\"total_tokens\":69,"
          + "\"prompt_tokens_details\":{\"cached_tokens\":48}}}";

  static final String TEXT_ANSWER =
      "{\"id\":\"chatcmpl-2\",\"object\":\"chat.completion\",\"model\":\"kvrouter-demo\","
          + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Done.\"},"
          + "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":80,\"completion_tokens\":2,"
          + "\"total_tokens\":82,\"prompt_tokens_details\":{\"cached_tokens\":64}}}";

  @BeforeAll
  static void startKit() {
    Config config =
        ConfigFactory.parseString(
                "kvrouter.ingress.programs.warm { enabled = on, max-uncached-tokens = 64 }")
            .withFallback(ConfigFactory.load());
    kit = ActorTestKit.create("programs", config);
    tokenizers = TokenizerRegistry.fromConfig(config);
  }

  @AfterAll
  static void stopKit() {
    kit.shutdownTestKit();
    tokenizers.close();
  }

  @BeforeEach
  void start() throws Exception {
    r0 = new LoopbackEngine();
    r1 = new LoopbackEngine();
    router = new PinningRouter();
    router.targets.add(new Target("r0", r0.url(), true, List.of(ReplicaInfo.RESPONSES_API)));
    router.targets.add(new Target("r1", r1.url(), true, List.of(ReplicaInfo.RESPONSES_API)));
    router.turns = "r1";
    metrics = new IngressMetrics();
    IngressSettings settings =
        IngressSettings.fromConfig(
                ConfigFactory.parseString(
                        "kvrouter.ingress { http.host = 127.0.0.1, first-byte-timeout = 5s }")
                    .withFallback(kit.system().settings().config()))
            .withPort(0);
    binding =
        IngressFrontend.start(kit.system(), settings, tokenizers, router, metrics, new NoAdmin())
            .toCompletableFuture()
            .get();
  }

  @AfterEach
  void stop() throws Exception {
    binding.unbind().toCompletableFuture().get();
    r0.close();
    r1.close();
  }

  HttpResponse<String> send(String path, String body, String... headers) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + binding.localAddress().getPort() + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  double warm(String outcome) {
    Counter c = metrics.registry().find("kvrouter.program.warm").tag("outcome", outcome).counter();
    return c == null ? 0 : c.count();
  }

  ReplicaQuery lastTurn() {
    List<ReplicaQuery> turns = router.turnQueries();
    return turns.get(turns.size() - 1);
  }

  void awaitAssert(Runnable check) {
    TestProbe<Object> probe = kit.createTestProbe();
    probe.awaitAssert(
        Duration.ofSeconds(5),
        () -> {
          check.run();
          return null;
        });
  }

  // --- who the program is, per API ---

  @Test
  void chat_sessionHeaderBodyKeysAndProgramHeader_nameTheProgram() throws Exception {
    r1.answer(
        "/v1/chat/completions",
        "application/json",
        TOOL_CALL_ANSWER.replace("tool_calls\"}", "stop\"}"));

    send("/v1/chat/completions", CHAT, "X-Session-ID", "sess-1");
    assertThat(lastTurn().sessionKey()).isEqualTo("sess-1");

    send(
        "/v1/chat/completions",
        CHAT.replace("{\"model\"", "{\"prompt_cache_key\":\"pck-1\",\"model\""));
    assertThat(lastTurn().sessionKey()).isEqualTo("pck-1");

    send("/v1/chat/completions", CHAT, "X-Kvrouter-Program", "prog-1");
    assertThat(lastTurn().sessionKey()).isEqualTo("prog-1");

    // The session header names the program even when the program header is sent too.
    send("/v1/chat/completions", CHAT, "X-Kvrouter-Program", "prog-1", "X-Session-ID", "sess-2");
    assertThat(lastTurn().sessionKey()).isEqualTo("sess-2");

    send("/v1/chat/completions", CHAT);
    assertThat(lastTurn().sessionKey()).isNull();
  }

  @Test
  void anthropic_metadataUserIdNamesTheProgram() throws Exception {
    r1.answer(
        "/v1/chat/completions",
        "application/json",
        TOOL_CALL_ANSWER.replace("tool_calls\"}", "stop\"}"));
    String message =
        "{\"model\":\"kvrouter-demo\",\"max_tokens\":8,\"metadata\":{\"user_id\":\"agent-7\"},"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

    HttpResponse<String> r = send("/v1/messages", message);

    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(lastTurn().sessionKey()).isEqualTo("agent-7");
  }

  @Test
  void responses_aResponseContinuesTheProgramOfTheResponseItFollows() throws Exception {
    r1.answer(
        ReplicaInfo.RESPONSES_API,
        "application/json",
        "{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"completed\",\"output\":[],"
            + "\"usage\":{\"input_tokens\":5,\"input_tokens_details\":{\"cached_tokens\":0}}}");
    String first = "{\"model\":\"kvrouter-demo\",\"input\":\"hello\"}";

    HttpResponse<String> one = send("/v1/responses", first);
    assertThat(one.statusCode()).as(one.body()).isEqualTo(200);
    String id = JSON.readTree(one.body()).path("id").asText();
    assertThat(lastTurn().sessionKey()).isNull();
    assertThat(ResponseIds.decode(id).program())
        .as("a chain's first response starts its program")
        .isEqualTo("resp_1");

    r1.answer(
        ReplicaInfo.RESPONSES_API,
        "application/json",
        "{\"id\":\"resp_2\",\"object\":\"response\",\"status\":\"completed\",\"output\":[],"
            + "\"usage\":{\"input_tokens\":5,\"input_tokens_details\":{\"cached_tokens\":0}}}");
    HttpResponse<String> two =
        send(
            "/v1/responses",
            "{\"model\":\"kvrouter-demo\",\"input\":\"more\",\"previous_response_id\":\""
                + id
                + "\"}");
    assertThat(two.statusCode()).as(two.body()).isEqualTo(200);
    assertThat(lastTurn().sessionKey()).isEqualTo("resp_1");
    assertThat(lastTurn().pinnedReplica()).isEqualTo("r1");
    String next = JSON.readTree(two.body()).path("id").asText();
    assertThat(ResponseIds.decode(next).program()).isEqualTo("resp_1");
    assertThat(ResponseIds.decode(next).engineId()).isEqualTo("resp_2");
  }

  @Test
  void malformedHints_areA400NamingTheHeader() throws Exception {
    HttpResponse<String> output =
        send("/v1/chat/completions", CHAT, "X-Kvrouter-Output-Tokens", "-3");
    HttpResponse<String> tool = send("/v1/chat/completions", CHAT, "X-Kvrouter-Tool-Call", "maybe");

    assertThat(output.statusCode()).isEqualTo(400);
    assertThat(output.body()).contains("X-Kvrouter-Output-Tokens");
    assertThat(tool.statusCode()).isEqualTo(400);
    assertThat(tool.body()).contains("X-Kvrouter-Tool-Call");
    assertThat(router.queries).isEmpty();
  }

  // --- warming the next turn ---

  /** The ids of the next turn (the reply and a tool result appended) as the ingress renders it. */
  static int[] nextTurnIds() throws Exception {
    ObjectNode body = (ObjectNode) JSON.readTree(CHAT);
    ArrayNode messages = body.withArray("messages");
    messages.add(JSON.readTree(TOOL_CALL_ANSWER).path("choices").path(0).path("message"));
    messages
        .addObject()
        .put("role", "tool")
        .put("tool_call_id", "call_1")
        .put("content", "print(1)");
    ModelTokenizer model = tokenizers.get("kvrouter-demo");
    List<Map<String, Object>> m =
        TemplateInputs.messages(
            JSON.convertValue(
                messages,
                new com.fasterxml.jackson.core.type.TypeReference<List<Map<String, Object>>>() {}));
    List<Map<String, Object>> tools =
        TemplateInputs.tools(
            JSON.convertValue(
                body.get("tools"),
                new com.fasterxml.jackson.core.type.TypeReference<List<Map<String, Object>>>() {}));
    return model.encodeRendered(model.renderChat(m, tools, true, Map.of()));
  }

  /** The ids of the first turn's prompt, generation prompt included. */
  static int[] turnIds() throws Exception {
    ObjectNode body = (ObjectNode) JSON.readTree(CHAT);
    ModelTokenizer model = tokenizers.get("kvrouter-demo");
    return model.encodeRendered(
        model.renderChat(
            TemplateInputs.messages(JSON.convertValue(body.get("messages"), MAPS)),
            TemplateInputs.tools(JSON.convertValue(body.get("tools"), MAPS)),
            true,
            Map.of()));
  }

  static final com.fasterxml.jackson.core.type.TypeReference<List<Map<String, Object>>> MAPS =
      new com.fasterxml.jackson.core.type.TypeReference<>() {};

  static int[] ids(JsonNode prompt) {
    int[] out = new int[prompt.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = prompt.get(i).asInt();
    }
    return out;
  }

  @Test
  void aReplyEndingInAToolCall_warmsTheNextTurnsPrefix_onTheTurnsReplica() throws Exception {
    r1.answer("/v1/chat/completions", "application/json", TOOL_CALL_ANSWER);
    r1.answer("/v1/completions", "application/json", "{\"choices\":[{\"text\":\"x\"}]}");

    HttpResponse<String> r = send("/v1/chat/completions", CHAT, "X-Session-ID", "agent-1");

    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    awaitAssert(() -> assertThat(warm("warmed")).isEqualTo(1));
    assertThat(r0.seen).as("nothing went to the other replica").isEmpty();
    List<LoopbackEngine.Seen> warms = r1.seen("/v1/completions");
    assertThat(warms).hasSize(1);
    JsonNode sent = JSON.readTree(warms.get(0).body());
    assertThat(sent.path("max_tokens").asInt()).isEqualTo(1);
    int[] prefix = ids(sent.path("prompt"));
    int[] next = nextTurnIds();
    assertThat(prefix.length)
        .as("the prefix holds the tool call as rendered, beyond the turn's own prompt")
        .isGreaterThan(turnIds().length + 10)
        .isLessThan(next.length);
    assertThat(Arrays.copyOf(next, prefix.length))
        .as("the warmed prefix is the start of the next turn's prompt, tool call rendered")
        .isEqualTo(prefix);
    ReplicaQuery query = router.warms().get(0);
    assertThat(query.pinnedReplica()).isEqualTo("r1");
    assertThat(query.sessionKey()).isEqualTo("agent-1");
    awaitAssert(() -> assertThat(router.releases).contains(query.requestId()));
  }

  @Test
  void aStreamedToolCall_warmsToo_andATextReplyDoesNot() throws Exception {
    String stream =
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"
            + "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\","
            + "\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"\"}}]}}]}\n\n"
            + "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":"
            + "{\"arguments\":\"{\\\"path\\\": \"}}]}}]}\n\n"
            + "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":"
            + "{\"arguments\":\"\\\"main.py\\\"}\"}}]}}]}\n\n"
            + "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
            + "data: [DONE]\n\n";
    r1.answer("/v1/chat/completions", "text/event-stream", stream);
    r1.answer("/v1/completions", "application/json", "{\"choices\":[{\"text\":\"x\"}]}");

    HttpResponse<String> r =
        send(
            "/v1/chat/completions",
            CHAT.replace("{\"model\"", "{\"stream\":true,\"model\""),
            "X-Session-ID",
            "agent-2");
    assertThat(r.statusCode()).isEqualTo(200);
    awaitAssert(() -> assertThat(warm("warmed")).isEqualTo(1));
    int[] prefix = ids(JSON.readTree(r1.seen("/v1/completions").get(0).body()).path("prompt"));
    assertThat(prefix.length).isGreaterThan(turnIds().length + 10);
    assertThat(Arrays.copyOf(nextTurnIds(), prefix.length)).isEqualTo(prefix);

    r1.answer(
        "/v1/chat/completions",
        "application/json",
        TOOL_CALL_ANSWER
            .replace("tool_calls\"}", "stop\"}")
            .replace(
                ",\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\": \\\"main.py\\\"}\"}}]",
                ""));
    send("/v1/chat/completions", CHAT, "X-Session-ID", "agent-3");
    send("/v1/chat/completions", CHAT, "X-Session-ID", "agent-3", "X-Kvrouter-Tool-Call", "false");
    assertThat(router.warms()).as("no warm after a text reply").hasSize(1);
  }

  @Test
  void noHeadroomOnTheReplica_skipsTheWarm() throws Exception {
    r1.answer("/v1/chat/completions", "application/json", TOOL_CALL_ANSWER);
    router.warmBusy = true;

    send("/v1/chat/completions", CHAT, "X-Session-ID", "agent-4");

    awaitAssert(() -> assertThat(warm("skipped_no_headroom")).isEqualTo(1));
    assertThat(r1.seen("/v1/completions")).isEmpty();
  }

  @Test
  void aReplicaServingOtherRequests_skipsTheWarm_andGivesItsReservationBack() throws Exception {
    r1.answer("/v1/chat/completions", "application/json", TOOL_CALL_ANSWER);
    r1.answer("/v1/completions", "application/json", "{\"choices\":[{\"text\":\"x\"}]}");
    router.othersInFlight = 1;

    send("/v1/chat/completions", CHAT, "X-Session-ID", "agent-6");

    awaitAssert(() -> assertThat(warm("skipped_not_idle")).isEqualTo(1));
    ReplicaQuery query = router.warms().get(0);
    assertThat(query.pinnedReplica()).isEqualTo("r1");
    awaitAssert(() -> assertThat(router.releases).contains(query.requestId()));
    assertThat(r1.seen("/v1/completions")).as("no warm reached the engine").isEmpty();
    assertThat(warm("warmed")).isZero();
  }

  @Test
  void aPrefixMostlyUncachedOnItsReplica_isNotWarmed() throws Exception {
    r1.answer("/v1/chat/completions", "application/json", TOOL_CALL_ANSWER);
    r1.answer("/v1/completions", "application/json", "{\"choices\":[{\"text\":\"x\"}]}");
    router.uncached = 65; // one more than a warm may prefill

    send("/v1/chat/completions", CHAT, "X-Session-ID", "agent-7");

    awaitAssert(() -> assertThat(warm("skipped_too_long")).isEqualTo(1));
    ReplicaQuery query = router.warms().get(0);
    awaitAssert(() -> assertThat(router.releases).contains(query.requestId()));
    assertThat(r1.seen("/v1/completions")).isEmpty();
  }

  @Test
  void theNextTurnArrivingFirst_closesTheWarmsConnection() throws Exception {
    r1.answer("/v1/chat/completions", "application/json", TOOL_CALL_ANSWER);
    r1.holding("/v1/completions");

    send("/v1/chat/completions", CHAT, "X-Session-ID", "agent-5");
    awaitAssert(() -> assertThat(r1.seen("/v1/completions")).hasSize(1));
    ReplicaQuery warmQuery = router.warms().get(0);
    assertThat(router.releases).doesNotContain(warmQuery.requestId());
    // The next turn is answered with text: no newer warm replaces the held one, its arrival must.
    r1.answer("/v1/chat/completions", "application/json", TEXT_ANSWER);

    HttpResponse<String> next = send("/v1/chat/completions", CHAT, "X-Session-ID", "agent-5");

    assertThat(next.statusCode()).isEqualTo(200);
    awaitAssert(() -> assertThat(warm("cancelled")).isEqualTo(1));
    assertThat(r1.closedWhileHeld.await(5, TimeUnit.SECONDS))
        .as("the engine saw the warm's connection close")
        .isTrue();
    awaitAssert(() -> assertThat(warm("cancelled")).isEqualTo(1));
    assertThat(warm("warmed")).isZero();
    awaitAssert(() -> assertThat(router.releases).contains(warmQuery.requestId()));
  }

  /** An admin view with nothing to show. */
  static final class NoAdmin implements AdminView {
    @Override
    public java.util.concurrent.CompletionStage<JsonNode> replicas() {
      return java.util.concurrent.CompletableFuture.completedFuture(JSON.createArrayNode());
    }

    @Override
    public java.util.concurrent.CompletionStage<Boolean> ready() {
      return java.util.concurrent.CompletableFuture.completedFuture(true);
    }
  }
}

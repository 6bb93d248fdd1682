package io.kvrouter.ingress.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.api.Sse;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.routing.ReplicaDirectory;
import io.kvrouter.ingress.routing.ReplicaQuery;
import io.kvrouter.ingress.routing.RouteOutcome;
import io.kvrouter.ingress.routing.Target;
import io.kvrouter.ingress.routing.TrackerRouter;
import io.kvrouter.ingress.tokenize.ModelTokenizer;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.ingress.tracing.Tracing;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.Tier;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.protocol.keys.ExtraKeys;
import io.kvrouter.testing.LoopbackHttp;
import io.kvrouter.tracker.TrackerConfig;
import io.kvrouter.tracker.actor.KvTracker;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A stream whose engine dies after its first byte goes on at another replica: the client's answer
 * is the one an uncut stream gives (same text, same token count), under the first engine's id and
 * created, with one usage that counts the whole answer. Tool calls are not moved, and no request
 * moves more often than the limit. The engines ({@link ContextEngine}) say the same thing given the
 * same context, so the uncut answer is the reference.
 *
 * <p>Where a cut stream continues is shown through the real {@link TrackerRouter} over a real
 * {@link KvTracker} (whose clock stands still, so nothing expires): on the replica holding the
 * longest cached prefix of the prompt followed by the tokens generated so far, which the prompt
 * alone does not tell apart from a replica holding the prompt only.
 */
class StreamMigrationTest {

  static final ObjectMapper JSON = new ObjectMapper();
  static ActorTestKit kit;
  static TokenizerRegistry tokenizers;
  static ModelTokenizer model;

  final FakeRouter router = new FakeRouter();
  final IngressMetrics metrics = new IngressMetrics();
  final List<ContextEngine> engines = new ArrayList<>();
  ServerBinding binding;

  @BeforeAll
  static void startKit() {
    kit = ActorTestKit.create();
    tokenizers = TokenizerRegistry.fromConfig(ConfigFactory.load());
    model = tokenizers.get("kvrouter-demo");
  }

  @AfterAll
  static void stopKit() {
    kit.shutdownTestKit();
    tokenizers.close();
  }

  @AfterEach
  void stop() throws Exception {
    engines.forEach(ContextEngine::close);
    if (binding != null) {
      binding.unbind().toCompletableFuture().get();
    }
  }

  void startIngress(String settings) throws Exception {
    binding = TrafficFront.start(kit, tokenizers, router, metrics, Tracing.off(), settings);
  }

  ContextEngine engine(String name, ContextEngine.Mode mode) throws Exception {
    ContextEngine e = new ContextEngine(name, model, mode);
    engines.add(e);
    router.targets.add(new Target(name, e.url(), true));
    return e;
  }

  HttpResponse<String> post(String path, String body) throws Exception {
    return LoopbackHttp.post("http://127.0.0.1:" + binding.localAddress().getPort() + path, body);
  }

  /** The data of each event of an SSE body, [DONE] included. */
  static List<String> events(String body) {
    List<String> out = new ArrayList<>();
    for (String event : body.split("\n\n")) {
      String data = Sse.data(event);
      if (data != null) {
        out.add(data);
      }
    }
    return out;
  }

  /** What the client was told: the text, each chunk's id and created, and the usages. */
  record Answer(
      String text,
      List<String> ids,
      List<Long> created,
      List<JsonNode> usages,
      List<String> events) {
    static Answer of(String body) throws Exception {
      StringBuilder text = new StringBuilder();
      List<String> ids = new ArrayList<>();
      List<Long> created = new ArrayList<>();
      List<JsonNode> usages = new ArrayList<>();
      List<String> events = StreamMigrationTest.events(body);
      for (String data : events) {
        if (data.equals("[DONE]")) {
          continue;
        }
        JsonNode chunk = JSON.readTree(data);
        if (chunk.has("error")) {
          continue;
        }
        ids.add(chunk.path("id").asText());
        created.add(chunk.path("created").asLong());
        for (JsonNode choice : chunk.path("choices")) {
          text.append(choice.path("text").asText(""));
          text.append(choice.path("delta").path("content").asText(""));
        }
        if (chunk.hasNonNull("usage")) {
          usages.add(chunk.get("usage"));
        }
      }
      return new Answer(text.toString(), ids, created, usages, events);
    }
  }

  /** Metrics are updated when the stream ends, after the client may already have its answer. */
  void awaitMetric(String line) {
    ProxyAwait.metric(kit, metrics, line);
  }

  void awaitNoOpenReservations() {
    ProxyAwait.noOpenReservations(kit, router);
  }

  static final String COMPLETION =
      "{\"model\":\"kvrouter-demo\",\"prompt\":\"Tell me a story about colours\",\"max_tokens\":10,"
          + "\"stream\":true,\"stream_options\":{\"include_usage\":true}}";

  static final String CHAT =
      "{\"model\":\"kvrouter-demo\",\"max_completion_tokens\":10,\"stream\":true,"
          + "\"stream_options\":{\"include_usage\":true},"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"Name some things\"}]}";

  /** The answer of an engine that is never cut, through the ingress. */
  Answer uncut(String path, String body) throws Exception {
    router.targets.clear();
    engine("whole", ContextEngine.Mode.OK);
    HttpResponse<String> r = post(path, body);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return Answer.of(r.body());
  }

  void assertSameAnswer(Answer migrated, Answer uncut, String firstEngine) {
    assertThat(migrated.text()).isEqualTo(uncut.text());
    assertThat(migrated.text()).isNotBlank();
    assertThat(migrated.ids()).allMatch(id -> id.endsWith(firstEngine));
    assertThat(migrated.created()).containsOnly(migrated.created().get(0));
    assertThat(migrated.usages()).hasSize(1);
    assertThat(migrated.usages().get(0).path("completion_tokens").asInt())
        .isEqualTo(uncut.usages().get(0).path("completion_tokens").asInt())
        .isEqualTo(10);
    assertThat(migrated.usages().get(0).path("prompt_tokens").asInt())
        .isEqualTo(uncut.usages().get(0).path("prompt_tokens").asInt());
    assertThat(migrated.events()).last().isEqualTo("[DONE]");
    assertThat(migrated.events()).noneMatch(e -> e.contains("\"error\""));
  }

  @Test
  void completionCutAfterThreeTokens_goesOnAtAnotherReplica_asIfUncut() throws Exception {
    startIngress("");
    ContextEngine first = engine("first", ContextEngine.Mode.CUT);
    ContextEngine second = engine("second", ContextEngine.Mode.OK);

    HttpResponse<String> r = post("/v1/completions", COMPLETION);

    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    Answer migrated = Answer.of(r.body());
    JsonNode continued = second.bodies.get(0);
    int[] prompt = model.encodePrompt("Tell me a story about colours");
    assertThat(continued.path("max_tokens").asInt()).isEqualTo(7);
    assertThat(continued.path("prompt").size()).isEqualTo(prompt.length + 3);
    assertThat(first.bodies).hasSize(1);
    awaitMetric("kvrouter_migrations_total{outcome=\"migrated\"} 1.0");
    awaitNoOpenReservations();
    assertThat(router.releases).hasSize(2);
    assertSameAnswer(migrated, uncut("/v1/completions", COMPLETION), "first");
  }

  @Test
  void chatCutAfterThreeTokens_continuesTheAssistantMessage_asIfUncut() throws Exception {
    startIngress("");
    engine("first", ContextEngine.Mode.CUT);
    ContextEngine second = engine("second", ContextEngine.Mode.OK);

    HttpResponse<String> r = post("/v1/chat/completions", CHAT);

    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    Answer migrated = Answer.of(r.body());
    JsonNode continued = second.bodies.get(0);
    assertThat(continued.path("continue_final_message").asBoolean()).isTrue();
    assertThat(continued.path("add_generation_prompt").asBoolean(true)).isFalse();
    assertThat(continued.path("max_completion_tokens").asInt()).isEqualTo(7);
    JsonNode last = continued.path("messages").get(continued.path("messages").size() - 1);
    assertThat(last.path("role").asText()).isEqualTo("assistant");
    assertThat(migrated.text()).startsWith(last.path("content").asText());
    // One opening event saying who speaks: the second engine's is not repeated.
    assertThat(migrated.events()).filteredOn(e -> e.contains("\"role\"")).hasSize(1);
    awaitNoOpenReservations();
    assertSameAnswer(migrated, uncut("/v1/chat/completions", CHAT), "first");
  }

  /** A stream whose first engine dies as {@code mode} says ends as the uncut one does. */
  void assertMovesOn(String settings, ContextEngine.Mode mode, String path, String body)
      throws Exception {
    startIngress(settings);
    engine("first", mode);
    engine("second", ContextEngine.Mode.OK);

    HttpResponse<String> r = post(path, body);

    Answer migrated = Answer.of(r.body());
    awaitMetric("kvrouter_migrations_total{outcome=\"migrated\"} 1.0");
    awaitNoOpenReservations();
    assertSameAnswer(migrated, uncut(path, body), "first");
  }

  @Test
  void streamThatStalls_movesOnAfterTheStallTimeout() throws Exception {
    assertMovesOn(
        "migration.stall-timeout = 300ms", ContextEngine.Mode.STALL, "/v1/completions", COMPLETION);
  }

  @Test
  void engineThatReportsItsOwnDeathMidAnswer_isReplaced_andItsErrorNeverShown() throws Exception {
    assertMovesOn("", ContextEngine.Mode.ERROR_EVENT, "/v1/chat/completions", CHAT);
  }

  /**
   * The events a structured chat answer ends with when its first engine dies as {@code mode} says:
   * never sent on to the second engine.
   */
  List<String> structuredAnswerCutBy(ContextEngine.Mode mode) throws Exception {
    startIngress("");
    engine("first", mode);
    ContextEngine second = engine("second", ContextEngine.Mode.OK);
    String body =
        CHAT.replace("\"messages\"", "\"response_format\":{\"type\":\"json_object\"},\"messages\"");

    HttpResponse<String> r = post("/v1/chat/completions", body);

    assertThat(second.bodies).isEmpty();
    awaitMetric("kvrouter_migrations_total{outcome=\"refused_structured\"} 1.0");
    awaitNoOpenReservations();
    return events(r.body());
  }

  @Test
  void engineErrorOfAnAnswerThatCannotMove_reachesTheClientAsTheEngineSaidIt() throws Exception {
    List<String> events = structuredAnswerCutBy(ContextEngine.Mode.ERROR_EVENT);

    assertThat(events.get(events.size() - 2)).contains("EngineDeadError");
    assertThat(events).last().isEqualTo("[DONE]");
  }

  @Test
  void toolCallCutInItsArguments_isNotMoved_andEndsWithTheErrorEvent() throws Exception {
    startIngress("");
    engine("first", ContextEngine.Mode.TOOL_CALL_CUT);
    ContextEngine second = engine("second", ContextEngine.Mode.OK);
    String body =
        CHAT.replace(
            "\"messages\"",
            "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
                + "\"parameters\":{\"type\":\"object\"}}}],\"messages\"");

    HttpResponse<String> r = post("/v1/chat/completions", body);

    List<String> events = events(r.body());
    assertThat(events.get(events.size() - 2)).contains("\"error\"");
    assertThat(events).last().isEqualTo("[DONE]");
    assertThat(second.bodies).isEmpty();
    awaitMetric("kvrouter_migrations_total{outcome=\"refused_tool_call\"} 1.0");
    awaitNoOpenReservations();
  }

  @Test
  void structuredOutput_isNotMoved() throws Exception {
    List<String> events = structuredAnswerCutBy(ContextEngine.Mode.CUT);

    assertThat(events.get(events.size() - 2)).contains("\"error\"");
  }

  @Test
  void noRequestMovesMoreOftenThanTheLimit() throws Exception {
    startIngress("migration.limit = 1");
    engine("first", ContextEngine.Mode.CUT);
    ContextEngine second = engine("second", ContextEngine.Mode.CUT);
    ContextEngine third = engine("third", ContextEngine.Mode.OK);

    HttpResponse<String> r = post("/v1/completions", COMPLETION);

    List<String> events = events(r.body());
    assertThat(events.get(events.size() - 2)).contains("\"error\"");
    assertThat(second.bodies).hasSize(1);
    assertThat(third.bodies).isEmpty();
    // What the client got before the error is whole: three tokens of each engine, not repeated.
    assertThat(Answer.of(r.body()).text().split(" ")).hasSize(1 + 6);
    awaitMetric("kvrouter_migrations_total{outcome=\"migrated\"} 1.0");
    awaitMetric("kvrouter_migrations_total{outcome=\"limit\"} 1.0");
    awaitNoOpenReservations();
  }

  // ------------------------------------------------------------------ placement

  static final String MODEL = "kvrouter-demo";
  static final int BLOCK = 16;
  static final String PROMPT = "Tell me a story about colours that goes on and on";

  /** Tokens the first engine streams before it dies: their prefill costs far more than... */
  static final int GENERATED = 3000;

  /** ...the queue the replica holding them has beyond the one holding the prompt only. */
  static final int QUEUED_ON_PROMPT_ONLY = 256;

  static final int QUEUED_ON_WHOLE = 1024;

  /** An engine the real router below places on, known to {@code tracker} and {@code directory}. */
  ContextEngine tracked(
      String name,
      ContextEngine.Mode mode,
      ActorRef<KvTracker.Command> tracker,
      ReplicaDirectory directory)
      throws Exception {
    ContextEngine e = new ContextEngine(name, model, mode);
    engines.add(e);
    ReplicaInfo info =
        new ReplicaInfo(name, 0, MODEL, e.url(), BLOCK, List.of(Tier.GPU), "both", true, true);
    tracker.tell(new KvTracker.ReplicaUp(info));
    directory.put(info);
    return e;
  }

  /** Replica {@code replica}'s engine reports the full blocks of {@code tokens} stored. */
  static void stored(ActorRef<KvTracker.Command> tracker, String replica, int[] tokens) {
    long[] keys = BlockKeys.of(MODEL, BLOCK).keys(tokens, ExtraKeys.of(null, null));
    long[] hashes = new long[keys.length];
    Arrays.setAll(hashes, i -> 1000L + i);
    tracker.tell(
        new KvTracker.ApplyBatch(
            new KvEventBatch(
                replica,
                1,
                0,
                new KvEvent[] {new BlocksStored(BlocksStored.ROOT, hashes, keys, Tier.GPU)})));
  }

  /** Keeps {@code tokens} of prefill no replica holds queued on {@code replica}, never released. */
  static void queued(TrackerRouter router, String replica, int tokens, Set<String> others)
      throws Exception {
    int[] ids = IntStream.range(0, tokens).map(i -> 50_000 + 3 * i + replica.length()).toArray();
    RouteOutcome outcome =
        router
            .selectAndReserve(new ReplicaQuery("queued-" + replica, MODEL, ids, 8, others))
            .toCompletableFuture()
            .get();
    assertThat(outcome).isInstanceOf(RouteOutcome.Routed.class);
    assertThat(((RouteOutcome.Routed) outcome).target().replicaId()).isEqualTo(replica);
  }

  @Test
  void continuation_goesToTheReplicaHoldingPromptAndGeneratedTokens_notTheOneHoldingThePrompt()
      throws Exception {
    ActorRef<KvTracker.Command> tracker =
        kit.spawn(
            KvTracker.create(
                TrackerConfig.defaults("ingress-1"),
                () -> 1_000L,
                Duration.ofHours(1),
                kit.system().ignoreRef(),
                kit.system().ignoreRef()));
    ReplicaDirectory directory = new ReplicaDirectory();
    TrackerRouter tracking =
        new TrackerRouter(
            tracker,
            kit.system().scheduler(),
            Duration.ofSeconds(5),
            directory,
            tokenizers,
            new IngressMetrics(),
            null);
    ContextEngine first = tracked("first", ContextEngine.Mode.CUT, tracker, directory);
    ContextEngine promptOnly = tracked("prompt-only", ContextEngine.Mode.OK, tracker, directory);
    ContextEngine whole = tracked("whole", ContextEngine.Mode.OK, tracker, directory);
    first.cutAfter = GENERATED;
    int[] prompt = model.encodePrompt(PROMPT);
    int[] context = Arrays.copyOf(prompt, prompt.length + GENERATED);
    for (int n = prompt.length; n < context.length; n++) {
      context[n] = first.next(Arrays.copyOf(context, n));
    }
    // Both hold the whole prompt; only "whole" holds what the first engine generated too (an
    // earlier answer to the same request, say), and it has more queued: by the prompt alone
    // "prompt-only" is the better place, by prompt and generated tokens "whole" is.
    stored(tracker, "prompt-only", prompt);
    stored(tracker, "whole", context);
    queued(tracking, "prompt-only", QUEUED_ON_PROMPT_ONLY, Set.of("first", "whole"));
    queued(tracking, "whole", QUEUED_ON_WHOLE, Set.of("first", "prompt-only"));
    binding =
        TrafficFront.start(kit, tokenizers, tracking, new IngressMetrics(), Tracing.off(), "");

    HttpResponse<String> r =
        LoopbackHttp.post(
            "http://127.0.0.1:" + binding.localAddress().getPort() + "/v1/completions",
            "{\"model\":\"kvrouter-demo\",\"prompt\":\""
                + PROMPT
                + "\",\"max_tokens\":"
                + (GENERATED + 10)
                + ",\"stream\":true,\"stream_options\":{\"include_usage\":true}}");

    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(first.bodies).hasSize(1);
    assertThat(promptOnly.bodies.size())
        .as("continuations sent to the prompt-only replica")
        .isZero();
    assertThat(whole.bodies.size()).as("continuations sent to the replica holding both").isOne();
    JsonNode continued = whole.bodies.get(0);
    assertThat(continued.path("prompt").size()).isEqualTo(context.length);
    assertThat(continued.path("max_tokens").asInt()).isEqualTo(10);
    assertThat(r.body()).contains("\"completion_tokens\":" + (GENERATED + 10));
    // The premise: routed by the prompt alone, the continuation would have gone elsewhere.
    RouteOutcome byPrompt =
        tracking
            .selectAndReserve(new ReplicaQuery("by-prompt", MODEL, prompt, 10, Set.of("first")))
            .toCompletableFuture()
            .get();
    assertThat(byPrompt).isInstanceOf(RouteOutcome.Routed.class);
    assertThat(((RouteOutcome.Routed) byPrompt).target().replicaId()).isEqualTo("prompt-only");
  }
}

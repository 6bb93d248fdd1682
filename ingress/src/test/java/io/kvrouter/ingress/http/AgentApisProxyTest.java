package io.kvrouter.ingress.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.routing.Target;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.protocol.ReplicaInfo;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
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
 * The Anthropic and Responses endpoints through a real ingress HTTP front, against scripted
 * engines: which engine path each request takes (pass-through where the engine serves the API,
 * translation elsewhere), how answers and errors come back, and what the ingress answers itself.
 */
class AgentApisProxyTest {

  static final ObjectMapper JSON = new ObjectMapper();
  static ActorTestKit kit;
  static TokenizerRegistry tokenizers;

  FakeRouter router;
  ServerBinding binding;
  final HttpClient client = HttpClient.newHttpClient();

  static final String MESSAGE =
      """
      {"model":"kvrouter-demo","max_tokens":8,"system":"Be brief.",
       "tools":[{"name":"get_weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}],
       "messages":[{"role":"user","content":"Weather?"}]}
      """;

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
    IngressSettings settings =
        IngressSettings.fromConfig(
                ConfigFactory.parseString(
                        "kvrouter.ingress { http.host = 127.0.0.1, first-byte-timeout = 5s }")
                    .withFallback(ConfigFactory.load()))
            .withPort(0);
    binding =
        IngressFrontend.start(
                kit.system(),
                settings,
                tokenizers,
                router,
                new IngressMetrics(),
                new StaticAdminView())
            .toCompletableFuture()
            .get();
  }

  @AfterEach
  void stop() throws Exception {
    binding.unbind().toCompletableFuture().get();
  }

  HttpResponse<String> send(String method, String path, String body) throws Exception {
    return client.send(
        HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + binding.localAddress().getPort() + path))
            .header("Content-Type", "application/json")
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void messages_goUnchangedToAnEngineThatServesThem() throws Exception {
    try (ScriptedEngine engine = new ScriptedEngine()) {
      String answer =
          "{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],"
              + "\"usage\":{\"input_tokens\":3,\"output_tokens\":1,\"cache_read_input_tokens\":7}}";
      engine.answer(ReplicaInfo.MESSAGES_API, 200, "application/json", answer);
      router.targets.add(new Target("r0", engine.url(), true, List.of(ReplicaInfo.MESSAGES_API)));

      HttpResponse<String> r = send("POST", "/v1/messages", MESSAGE);

      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      assertThat(JSON.readTree(r.body())).isEqualTo(JSON.readTree(answer));
      assertThat(engine.seen).hasSize(1);
      assertThat(engine.seen.get(0).path()).isEqualTo("/v1/messages");
      assertThat(JSON.readTree(engine.seen.get(0).body())).isEqualTo(JSON.readTree(MESSAGE));
    }
  }

  @Test
  void messages_areTranslatedForAChatOnlyEngine_andItsErrorsComeBackInAnthropicShape()
      throws Exception {
    try (ScriptedEngine engine = new ScriptedEngine()) {
      engine.answer(
          "/v1/chat/completions",
          400,
          "application/json",
          "{\"error\":{\"message\":\"bad temperature\",\"type\":\"BadRequestError\",\"param\":\"temperature\",\"code\":400}}");
      router.targets.add(new Target("r0", engine.url(), true));

      HttpResponse<String> r = send("POST", "/v1/messages", MESSAGE);

      assertThat(engine.seen.get(0).path()).isEqualTo("/v1/chat/completions");
      JsonNode sent = JSON.readTree(engine.seen.get(0).body());
      assertThat(sent.path("tools").path(0).path("function").path("name").asText())
          .isEqualTo("get_weather");
      assertThat(sent.path("messages").path(0).path("role").asText()).isEqualTo("system");
      assertThat(r.statusCode()).isEqualTo(400);
      JsonNode error = JSON.readTree(r.body());
      assertThat(error.path("type").asText()).isEqualTo("error");
      assertThat(error.path("error").path("type").asText()).isEqualTo("invalid_request_error");
      assertThat(error.path("error").path("message").asText()).isEqualTo("bad temperature");
    }
  }

  @Test
  void countTokens_isAnsweredByTheIngress_withTheMessagesPromptLength() throws Exception {
    HttpResponse<String> withTools =
        send("POST", "/v1/messages/count_tokens", MESSAGE.replace("\"max_tokens\":8,", ""));
    HttpResponse<String> without =
        send(
            "POST",
            "/v1/messages/count_tokens",
            "{\"model\":\"kvrouter-demo\",\"system\":\"Be brief.\","
                + "\"messages\":[{\"role\":\"user\",\"content\":\"Weather?\"}]}");

    assertThat(withTools.statusCode()).as(withTools.body()).isEqualTo(200);
    int tools = JSON.readTree(withTools.body()).path("input_tokens").asInt();
    int plain = JSON.readTree(without.body()).path("input_tokens").asInt();
    assertThat(tools).isGreaterThan(plain + 10);
    assertThat(router.queries).as("nothing routed").isEmpty();
  }

  @Test
  void unknownAndWrongMethodPaths_underMessages_getAnthropicErrors() throws Exception {
    HttpResponse<String> get = send("GET", "/v1/messages", null);
    HttpResponse<String> batches = send("POST", "/v1/messages/batches", "{}");

    assertThat(get.statusCode()).isEqualTo(405);
    assertThat(JSON.readTree(get.body()).path("type").asText()).isEqualTo("error");
    assertThat(batches.statusCode()).isEqualTo(404);
    assertThat(JSON.readTree(batches.body()).path("error").path("type").asText())
        .isEqualTo("not_found_error");
  }

  @Test
  void modelNoReplicaServes_isAnthropicsNotFoundError_namingTheModel() throws Exception {
    HttpResponse<String> r = send("POST", "/v1/messages", MESSAGE.replace("kvrouter-demo", "nope"));
    assertThat(r.statusCode()).isEqualTo(404);
    JsonNode error = JSON.readTree(r.body());
    assertThat(error.path("type").asText()).isEqualTo("error");
    assertThat(error.path("error").path("type").asText()).isEqualTo("not_found_error");
    assertThat(error.path("error").path("message").asText()).contains("'nope'");
  }

  @Test
  void responses_comeBackWithIdsNamingTheReplica_andFollowUpsGoToItsEngineId() throws Exception {
    try (ScriptedEngine engine = new ScriptedEngine()) {
      engine.answer(
          ReplicaInfo.RESPONSES_API,
          200,
          "application/json",
          "{\"id\":\"resp_42\",\"object\":\"response\",\"status\":\"completed\",\"output\":[],"
              + "\"previous_response_id\":\"resp_41\",\"usage\":{\"input_tokens\":5,"
              + "\"input_tokens_details\":{\"cached_tokens\":4}}}");
      router.targets.add(
          new Target("sim-1", engine.url(), true, List.of(ReplicaInfo.RESPONSES_API)));
      String previous = io.kvrouter.ingress.api.ResponseIds.encode("resp_41", "sim-1");

      HttpResponse<String> r =
          send(
              "POST",
              "/v1/responses",
              "{\"model\":\"kvrouter-demo\",\"input\":\"More.\",\"previous_response_id\":\""
                  + previous
                  + "\"}");

      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      JsonNode body = JSON.readTree(r.body());
      assertThat(body.path("id").asText())
          .isEqualTo(io.kvrouter.ingress.api.ResponseIds.encode("resp_42", "sim-1", "resp_42"));
      assertThat(body.path("previous_response_id").asText()).isEqualTo(previous);
      assertThat(JSON.readTree(engine.seen.get(0).body()).path("previous_response_id").asText())
          .as("the engine gets its own id")
          .isEqualTo("resp_41");
    }
  }

  @Test
  void streamedResponses_rewriteOnlyTheLifecycleEvents() throws Exception {
    try (ScriptedEngine engine = new ScriptedEngine()) {
      String delta =
          "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\","
              + "\"item_id\":\"msg_1\",\"delta\":\"hi\",\"sequence_number\":1}\n\n";
      engine.answer(
          ReplicaInfo.RESPONSES_API,
          200,
          "text/event-stream",
          "event: response.created\ndata: {\"type\":\"response.created\",\"response\":"
              + "{\"id\":\"resp_7\",\"status\":\"in_progress\"},\"sequence_number\":0}\n\n"
              + delta
              + "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":"
              + "{\"id\":\"resp_7\",\"status\":\"completed\"},\"sequence_number\":2}\n\n");
      router.targets.add(
          new Target("sim-2", engine.url(), true, List.of(ReplicaInfo.RESPONSES_API)));

      HttpResponse<String> r =
          send(
              "POST",
              "/v1/responses",
              "{\"model\":\"kvrouter-demo\",\"input\":\"Hi\",\"stream\":true}");

      assertThat(r.statusCode()).isEqualTo(200);
      String id = io.kvrouter.ingress.api.ResponseIds.encode("resp_7", "sim-2", "resp_7");
      assertThat(r.body()).contains(delta);
      assertThat(r.body().split("\"id\":\"" + id.replace(".", "\\.") + "\"", -1)).hasSize(3);
      assertThat(r.body()).doesNotContain("\"id\":\"resp_7\"");
    }
  }
}

package io.kvrouter.sim;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.testing.LoopbackHttp;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The ids and times the simulated engine's answers carry, as a client behind a router sees them:
 * two replicas never answer with the same id, {@code created} is when the request came (not when
 * the engine started), and Anthropic answers carry Anthropic's {@code msg_} and {@code toolu_} ids.
 */
class SimResponseIdsTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOOLS =
      "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"lookup\","
          + "\"parameters\":{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\"}}}}}]";
  private static final String CHAT_WITH_TOOL =
      "{\"model\":\"m\",\"max_tokens\":30,\"tool_choice\":\"required\","
          + TOOLS
          + ",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
  private static final String MESSAGE_WITH_TOOL =
      "{\"model\":\"m\",\"max_tokens\":30,\"tool_choice\":{\"type\":\"any\"},"
          + "\"tools\":[{\"name\":\"lookup\",\"input_schema\":{\"properties\":{\"q\":{\"type\":\"string\"}}}}],"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

  private static long startedSecond;
  private static SimEngine a;
  private static SimEngine b;

  @BeforeAll
  static void start() throws Exception {
    startedSecond = System.currentTimeMillis() / 1000;
    SimEngineSettings s =
        SimEngineSettings.loopback()
            .withModel("m")
            .withEndpoints(0, null, null)
            .withApis(SimApis.vllm())
            .withEngine(
                SimEngineConfig.defaults()
                    .withNumBlocks(64)
                    .withTiming(new MockerTimingModel(100)));
    a = SimEngine.start(s);
    b = SimEngine.start(s);
  }

  @AfterAll
  static void stop() {
    a.close();
    b.close();
  }

  private static JsonNode post(SimEngine e, String path, String body) throws Exception {
    var r = LoopbackHttp.post(e.baseUrl() + path, body);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return JSON.readTree(r.body());
  }

  @Test
  void twoReplicasAnsweringTheSameRequests_neverRepeatAnId() throws Exception {
    List<String> ids = new ArrayList<>();
    for (SimEngine e : List.of(a, b, a, b)) {
      ids.add(
          post(e, "/v1/completions", "{\"model\":\"m\",\"prompt\":\"x\",\"max_tokens\":1}")
              .path("id")
              .asText());
      JsonNode chat = post(e, "/v1/chat/completions", CHAT_WITH_TOOL);
      ids.add(chat.path("id").asText());
      ids.add(chat.at("/choices/0/message/tool_calls/0/id").asText());
      JsonNode message = post(e, "/v1/messages", MESSAGE_WITH_TOOL);
      ids.add(message.path("id").asText());
      ids.add(message.at("/content/0/id").asText());
      ids.add(
          post(e, "/v1/responses", "{\"model\":\"m\",\"input\":\"hi\",\"max_output_tokens\":1}")
              .path("id")
              .asText());
    }
    assertThat(ids).doesNotContain("").doesNotHaveDuplicates();
  }

  @Test
  void openAiIds_carryVllmsPrefixes_andAnthropicIds_anthropics() throws Exception {
    assertThat(
            post(a, "/v1/completions", "{\"model\":\"m\",\"prompt\":\"x\",\"max_tokens\":1}")
                .path("id")
                .asText())
        .matches("cmpl-[0-9a-f]{32}");
    JsonNode chat = post(a, "/v1/chat/completions", CHAT_WITH_TOOL);
    assertThat(chat.path("id").asText()).matches("chatcmpl-[0-9a-f]{32}");
    assertThat(chat.at("/choices/0/message/tool_calls/0/id").asText())
        .matches("chatcmpl-tool-[0-9a-f]{32}");
    JsonNode message = post(a, "/v1/messages", MESSAGE_WITH_TOOL);
    assertThat(message.path("id").asText()).matches("msg_[0-9A-Za-z]{24}");
    assertThat(message.at("/content/0/type").asText()).isEqualTo("tool_use");
    assertThat(message.at("/content/0/id").asText()).matches("toolu_[0-9A-Za-z]{24}");
    assertThat(
            post(a, "/v1/responses", "{\"model\":\"m\",\"input\":\"hi\",\"max_output_tokens\":1}")
                .path("id")
                .asText())
        .matches("resp_[0-9a-f]{32}");
  }

  @Test
  void created_isTheRequestsOwnSecond_notTheEnginesStart() throws Exception {
    while (System.currentTimeMillis() / 1000 == startedSecond) {
      Thread.sleep(20);
    }
    long before = System.currentTimeMillis() / 1000;
    JsonNode completion =
        post(a, "/v1/completions", "{\"model\":\"m\",\"prompt\":\"x\",\"max_tokens\":1}");
    JsonNode chat = post(a, "/v1/chat/completions", CHAT_WITH_TOOL);
    JsonNode response =
        post(a, "/v1/responses", "{\"model\":\"m\",\"input\":\"hi\",\"max_output_tokens\":1}");
    long after = System.currentTimeMillis() / 1000;
    Set<Long> created = new HashSet<>();
    created.add(completion.path("created").asLong());
    created.add(chat.path("created").asLong());
    created.add(response.path("created_at").asLong());
    assertThat(created).allSatisfy(c -> assertThat(c).isBetween(before, after));
    assertThat(before).isGreaterThan(startedSecond);
  }
}

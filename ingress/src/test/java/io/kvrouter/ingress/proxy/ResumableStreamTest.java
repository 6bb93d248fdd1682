package io.kvrouter.ingress.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

class ResumableStreamTest {

  static final ObjectMapper JSON = new ObjectMapper();

  static String chat(String id, long created, String deltaJson, String finish) {
    return "data: {\"id\":\""
        + id
        + "\",\"object\":\"chat.completion.chunk\",\"created\":"
        + created
        + ",\"choices\":[{\"index\":0,\"delta\":"
        + deltaJson
        + ",\"finish_reason\":"
        + (finish == null ? "null" : "\"" + finish + "\"")
        + "}]}";
  }

  static JsonNode data(String relayed) throws Exception {
    return JSON.readTree(relayed.substring("data: ".length()).trim());
  }

  @Test
  void firstEnginesEvents_passUnchanged_andTheirTextIsKept() {
    ResumableStream s = new ResumableStream(JSON);
    String role = chat("a", 1, "{\"role\":\"assistant\",\"content\":\"\"}", null);
    String hello = chat("a", 1, "{\"content\":\"Hello\"}", null);

    assertThat(s.relay(role)).isEqualTo(role + "\n\n");
    assertThat(s.relay(hello)).isEqualTo(hello + "\n\n");
    assertThat(s.text()).isEqualTo("Hello");
    assertThat(s.done()).isFalse();
    assertThat(s.finished()).isFalse();
  }

  @Test
  void laterEnginesEvents_takeTheFirstIdAndCreated_andLoseTheirOpeningRole() throws Exception {
    ResumableStream s = new ResumableStream(JSON);
    s.relay(chat("a", 1, "{\"role\":\"assistant\",\"content\":\"\"}", null));
    s.relay(chat("a", 1, "{\"content\":\"Hel\"}", null));
    s.resumed(1);

    assertThat(s.relay(chat("b", 2, "{\"role\":\"assistant\",\"content\":\"\"}", null))).isEmpty();
    JsonNode next = data(s.relay(chat("b", 2, "{\"content\":\"lo\"}", "length")));

    assertThat(next.path("id").asText()).isEqualTo("a");
    assertThat(next.path("created").asLong()).isEqualTo(1);
    assertThat(s.text()).isEqualTo("Hello");
    assertThat(s.finished()).isTrue();
  }

  @Test
  void laterEnginesUsage_countsTheEarlierTokensAsCompletion() throws Exception {
    ResumableStream s = new ResumableStream(JSON);
    s.relay("data: {\"id\":\"a\",\"created\":1,\"choices\":[{\"index\":0,\"text\":\"x y\"}]}");
    s.resumed(2);

    JsonNode usage =
        data(s.relay(
                "data: {\"id\":\"b\",\"created\":2,\"choices\":[],\"usage\":{\"prompt_tokens\":12,"
                    + "\"completion_tokens\":8,\"total_tokens\":20,"
                    + "\"prompt_tokens_details\":{\"cached_tokens\":12}}}"))
            .path("usage");

    assertThat(usage.path("prompt_tokens").asInt()).isEqualTo(10);
    assertThat(usage.path("completion_tokens").asInt()).isEqualTo(10);
    assertThat(usage.path("total_tokens").asInt()).isEqualTo(20);
    assertThat(usage.path("prompt_tokens_details").path("cached_tokens").asInt()).isEqualTo(10);
  }

  @Test
  void halfAnEvent_isNotRelayed() {
    ResumableStream s = new ResumableStream(JSON);

    assertThat(s.relay("data: {\"id\":\"a\",\"choices\":[{\"index\":0,\"te")).isEmpty();
    assertThat(s.done()).isFalse();
  }

  @Test
  void toolCallDelta_doneAndEngineErrors_areNoted() {
    ResumableStream s = new ResumableStream(JSON);
    s.relay(chat("a", 1, "{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"f\"}}]}", null));
    assertThat(s.toolCall()).isTrue();

    ResumableStream done = new ResumableStream(JSON);
    done.relay("data: [DONE]");
    assertThat(done.done()).isTrue();

    ResumableStream failed = new ResumableStream(JSON);
    String error = "data: {\"error\":{\"message\":\"boom\"}}";
    assertThat(failed.relay(error)).as("held back").isEmpty();
    failed.relay("data: [DONE]");
    assertThat(failed.engineError()).isEqualTo(error + "\n\n");
    assertThat(failed.done()).as("an answer the engine gave up on is not done").isFalse();
    failed.resumed(0);
    assertThat(failed.engineError()).isNull();
  }
}

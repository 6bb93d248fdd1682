package io.kvrouter.ingress.program;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.ingress.api.Endpoint;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** What a reply says of the next turn, in each protocol, whole and streamed. */
class ReplyReaderTest {

  static final ObjectMapper JSON = new ObjectMapper();

  static Reply read(Endpoint endpoint, boolean stream, String... chunks) {
    ReplyReader reader = new ReplyReader(endpoint, stream, JSON);
    for (String c : chunks) {
      reader.feed(c.getBytes(StandardCharsets.UTF_8));
    }
    return reader.finish();
  }

  @Test
  void anthropicStream_toolUse_isAToolCall_withItsInputAssembled_andTheEnginesUsage() {
    Reply r =
        read(
            Endpoint.MESSAGES,
            true,
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":"
                + "{\"input_tokens\":90,\"output_tokens\":0}}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
                + "\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"grep\",\"input\":{}}}\n\n"
                + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
                + "\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\": \"}}\n",
            "\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
                + "\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"a.py\\\"}\"}}\n\n",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
                + "\"tool_use\"},\"usage\":{\"input_tokens\":10,\"cache_read_input_tokens\":80,"
                + "\"output_tokens\":7}}\n\n");

    assertThat(r.toolCall()).isTrue();
    assertThat(r.appended().get(0).path("content").get(0).path("input").path("path").asText())
        .isEqualTo("a.py");
    assertThat(r.promptTokens()).isEqualTo(90);
    assertThat(r.cachedTokens()).isEqualTo(80);
    assertThat(r.missingTokens()).isEqualTo(10);
    assertThat(r.service(0)).isEqualTo(17);
  }

  @Test
  void anthropicWhole_endTurn_isNoToolCall() {
    Reply r =
        read(
            Endpoint.MESSAGES,
            false,
            "{\"content\":[{\"type\":\"text\",\"text\":\"Done.\"}],\"stop_reason\":\"end_turn\","
                + "\"usage\":{\"input_tokens\":5,\"cache_read_input_tokens\":0,\"output_tokens\":2}}");
    assertThat(r.toolCall()).isFalse();
    assertThat(r.appended().get(0).path("role").asText()).isEqualTo("assistant");
  }

  @Test
  void responses_aFunctionCallItem_isAToolCall_wholeOrFromTheCompletedEvent() {
    String response =
        "{\"id\":\"resp_1\",\"output\":[{\"type\":\"function_call\",\"call_id\":\"c1\","
            + "\"name\":\"grep\",\"arguments\":\"{}\"}],\"usage\":{\"input_tokens\":40,"
            + "\"input_tokens_details\":{\"cached_tokens\":32},\"output_tokens\":3}}";
    Reply whole = read(Endpoint.RESPONSES, false, response);
    Reply streamed =
        read(
            Endpoint.RESPONSES,
            true,
            "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{}}\n\n",
            "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":"
                + response
                + "}\n\n");

    for (Reply r : new Reply[] {whole, streamed}) {
      assertThat(r.toolCall()).isTrue();
      assertThat(r.appended().get(0).path("call_id").asText()).isEqualTo("c1");
      assertThat(r.missingTokens()).isEqualTo(8);
    }
    assertThat(read(Endpoint.RESPONSES, true, "event: response.created\n\n")).isNull();
  }

  @Test
  void anAnswerPastTheLimit_givesNoReply() {
    ReplyReader reader = new ReplyReader(Endpoint.CHAT, false, JSON);
    reader.feed(new byte[ReplyReader.MAX_BYTES + 1]);
    assertThat(reader.finish()).isNull();
  }
}

package io.kvrouter.ingress.pd;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The handshake bodies against what vLLM's NIXL proxies send (vllm-project/vllm {@code
 * tests/v1/kv_connector/nixl_integration/toy_proxy_server.py}), and the skip rule's two thresholds.
 */
class HandoffAndSkipRuleTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private static ObjectNode client() throws Exception {
    return (ObjectNode)
        JSON.readTree(
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                + "\"stream\":true,\"stream_options\":{\"include_usage\":true},"
                + "\"max_tokens\":200,\"max_completion_tokens\":200,\"min_tokens\":5}");
  }

  @Test
  void prefillBodyAsksForOneUnstreamedTokenAndARemoteDecode_leavingTheClientsBodyAlone()
      throws Exception {
    ObjectNode client = client();
    String before = client.toString();
    ObjectNode p = Handoff.prefillBody(client);
    assertThat(client.toString()).isEqualTo(before);
    assertThat(p.path("stream").asBoolean(true)).isFalse();
    assertThat(p.path("max_tokens").asInt()).isEqualTo(1);
    assertThat(p.path("max_completion_tokens").asInt()).isEqualTo(1);
    assertThat(p.has("stream_options")).isFalse();
    assertThat(p.has("min_tokens")).isFalse();
    JsonNode kv = p.path("kv_transfer_params");
    assertThat(kv.path("do_remote_decode").asBoolean()).isTrue();
    assertThat(kv.path("do_remote_prefill").asBoolean(true)).isFalse();
    for (String f : new String[] {"remote_engine_id", "remote_block_ids", "remote_host"}) {
      assertThat(kv.get(f).isNull()).as(f).isTrue();
    }
    assertThat(p.path("messages")).isEqualTo(client.path("messages"));
  }

  @Test
  void decodeBodyIsTheClientsRequestCarryingThePrefillsParameters() throws Exception {
    JsonNode answer =
        JSON.readTree(
            "{\"choices\":[],\"kv_transfer_params\":{\"do_remote_prefill\":true,"
                + "\"remote_block_ids\":[1,2],\"remote_engine_id\":\"e\",\"remote_host\":\"h\","
                + "\"remote_port\":5600}}");
    JsonNode params = Handoff.transferParams(answer);
    assertThat(params).isNotNull();
    ObjectNode d = Handoff.decodeBody(client(), params);
    assertThat(d.path("kv_transfer_params")).isEqualTo(answer.path("kv_transfer_params"));
    assertThat(d.path("stream").asBoolean()).isTrue();
    assertThat(d.path("max_tokens").asInt()).isEqualTo(200);
  }

  @Test
  void anAnswerWithoutARemotePrefillHasNoUsableParameters() throws Exception {
    assertThat(Handoff.transferParams(JSON.readTree("{\"choices\":[]}"))).isNull();
    assertThat(Handoff.transferParams(JSON.readTree("{\"kv_transfer_params\":null}"))).isNull();
    assertThat(
            Handoff.transferParams(
                JSON.readTree("{\"kv_transfer_params\":{\"do_remote_prefill\":false}}")))
        .isNull();
    assertThat(Handoff.transferParams(null)).isNull();
  }

  @Test
  void shortPromptsAndPromptsMostlyCachedOnTheDecodeReplicaSkipTheHop() {
    PdSettings s = new PdSettings(512, 256, 2, Duration.ofSeconds(60));
    assertThat(s.skipReason(511, 0)).contains("under 512");
    assertThat(s.skipReason(512, 0)).isNull();
    assertThat(s.skipReason(2_000, 1_745)).contains("uncached");
    assertThat(s.skipReason(2_000, 1_744)).isNull();
    assertThat(s.skipReason(2_000, 5_000)).as("cached beyond the prompt").isNotNull();
  }
}

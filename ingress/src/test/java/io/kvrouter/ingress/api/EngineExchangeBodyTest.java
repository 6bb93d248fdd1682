package io.kvrouter.ingress.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.ingress.routing.Target;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The engine body of a request whose body is forwarded as it came is the client's own bytes (no
 * second serialisation); one the ingress changes is serialised from the changed tree.
 */
class EngineExchangeBodyTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Target TARGET = new Target("r0", "http://127.0.0.1:1", true);
  private final BodyReader reader = new BodyReader(JSON);
  private final RequestValidator validator = new RequestValidator();

  private InferenceRequest request(Endpoint endpoint, String body) {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    JsonNode json = reader.read(bytes);
    return validator.validate(endpoint, json).withSent(json, bytes);
  }

  @Test
  void chat_isForwardedAsTheClientsBytes() {
    // spacing and key order a re-serialisation would not keep
    String body =
        "{ \"stream\" : true,\n \"model\": \"m\", \"messages\": [ {\"role\":\"user\","
            + " \"content\":\"hi\"} ] }";
    InferenceRequest request = request(Endpoint.CHAT, body);
    byte[] sent = EngineExchange.of(request, new int[] {1, 2}, TARGET, JSON).body();
    assertThat(new String(sent, StandardCharsets.UTF_8)).isEqualTo(body);
  }

  @Test
  void completionsWhosePromptBecomesTokenIds_isSerialisedFromTheChangedTree() throws Exception {
    InferenceRequest request =
        request(Endpoint.COMPLETIONS, "{ \"model\": \"m\", \"prompt\": \"hi\" }");
    byte[] sent = EngineExchange.of(request, new int[] {7, 8}, TARGET, JSON).body();
    assertThat(JSON.readTree(sent).path("prompt").toString()).isEqualTo("[7,8]");
  }

  @Test
  void completionsWithTokenIds_areTheBytesOfTheChangedTree() throws Exception {
    // fields before and after the prompt, nested values, unicode: as the copy serialised them
    InferenceRequest request =
        request(
            Endpoint.COMPLETIONS,
            "{ \"model\": \"m\", \"stop\": [\"\\n\", \"é\"], \"prompt\": \"hi there\","
                + " \"max_tokens\": 5, \"logit_bias\": {\"50256\": -100}, \"echo\": false }");
    int[] ids = {0, 7, 200019, 2147483647};
    byte[] sent = EngineExchange.of(request, ids, TARGET, JSON).body();
    byte[] copied = JSON.writeValueAsBytes(EngineExchange.openAiBody(request, ids, TARGET));
    assertThat(new String(sent, StandardCharsets.UTF_8))
        .isEqualTo(new String(copied, StandardCharsets.UTF_8))
        .contains("\"prompt\":[0,7,200019,2147483647],\"max_tokens\"");
  }

  @Test
  void requestWithoutItsBytes_isSerialised() throws Exception {
    String body = "{ \"model\": \"m\", \"messages\": [{\"role\":\"user\",\"content\":\"hi\"}] }";
    InferenceRequest request =
        validator.validate(Endpoint.CHAT, reader.read(body.getBytes(StandardCharsets.UTF_8)));
    byte[] sent = EngineExchange.of(request, new int[] {1}, TARGET, JSON).body();
    assertThat(JSON.readTree(sent)).isEqualTo(JSON.readTree(body));
    assertThat(new String(sent, StandardCharsets.UTF_8)).doesNotContain(" ");
  }
}

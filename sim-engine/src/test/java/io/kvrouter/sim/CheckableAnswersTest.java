package io.kvrouter.sim;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.testing.LoopbackHttp;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The simulated engine's answers depend on their context only ({@link AnswerTokens}): the same
 * request gives the same answer whatever its id, and an answer continued from its prompt and the
 * text so far (completions: token ids; chat: {@code continue_final_message}) goes on exactly as the
 * uncut one, which is what lets a migrated stream be checked against an uncut run.
 */
class CheckableAnswersTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static SimEngine engine;

  @BeforeAll
  static void start() throws Exception {
    engine =
        SimEngine.start(
            SimEngineSettings.loopback()
                .withModel("m")
                .withEndpoints(0, null, null)
                .withEngine(
                    SimEngineConfig.defaults()
                        .withNumBlocks(256)
                        .withTiming(new MockerTimingModel(100))));
  }

  @AfterAll
  static void stop() {
    engine.close();
  }

  private static JsonNode post(String path, JsonNode body) throws Exception {
    var r = LoopbackHttp.post(engine.baseUrl() + path, JSON.writeValueAsString(body));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return JSON.readTree(r.body());
  }

  private static ObjectNode chat(int maxTokens) {
    ObjectNode body = JSON.createObjectNode().put("model", "m").put("max_tokens", maxTokens);
    body.putArray("messages")
        .addObject()
        .put("role", "user")
        .put("content", "Tell me a long story about a lighthouse keeper.");
    return body;
  }

  @Test
  void sameRequestTwice_sameAnswer_andItIsMadeOfTheVocabulary() throws Exception {
    String a = post("/v1/chat/completions", chat(60)).at("/choices/0/message/content").asText();
    String b = post("/v1/chat/completions", chat(60)).at("/choices/0/message/content").asText();
    assertThat(a).hasSize(60).isEqualTo(b).matches("[a-z ]+");
  }

  @Test
  void chatContinuedFromItsFinalMessage_goesOnAsTheUncutAnswer() throws Exception {
    String uncut = post("/v1/chat/completions", chat(80)).at("/choices/0/message/content").asText();
    // Cut after a letter: transformers strips whitespace that ends the final message.
    int cut = 37;
    while (uncut.charAt(cut - 1) == ' ') {
      cut++;
    }
    ObjectNode rest = chat(80 - cut).put("add_generation_prompt", false);
    rest.put("continue_final_message", true);
    ((ArrayNode) rest.get("messages"))
        .addObject()
        .put("role", "assistant")
        .put("content", uncut.substring(0, cut));
    JsonNode continued = post("/v1/chat/completions", rest);
    assertThat(uncut.substring(0, cut) + continued.at("/choices/0/message/content").asText())
        .isEqualTo(uncut);
    // The continued prompt is the uncut prompt, its generation prompt and the text so far.
    int uncutPrompt = post("/v1/chat/completions", chat(1)).at("/usage/prompt_tokens").asInt();
    assertThat(continued.at("/usage/prompt_tokens").asInt()).isEqualTo(uncutPrompt + cut);
  }

  @Test
  void completionContinuedFromPromptAndGeneratedIds_goesOnAsTheUncutAnswer() throws Exception {
    int[] prompt = ByteTokenizer.encode("Once upon a time, in a city by the sea, there lived");
    ObjectNode body = JSON.createObjectNode().put("model", "m").put("max_tokens", 70);
    ArrayNode ids = body.putArray("prompt");
    for (int t : prompt) {
      ids.add(t);
    }
    String uncut = post("/v1/completions", body).at("/choices/0/text").asText();
    int cut = 23;
    ObjectNode rest = body.deepCopy().put("max_tokens", 70 - cut);
    ArrayNode more = (ArrayNode) rest.get("prompt");
    for (int t : ByteTokenizer.encode(uncut.substring(0, cut))) {
      more.add(t);
    }
    String continued = post("/v1/completions", rest).at("/choices/0/text").asText();
    assertThat(uncut.substring(0, cut) + continued).isEqualTo(uncut);
  }

  @Test
  void bothGenerationPromptAndContinuation_isRefusedAsVllmDoes() throws Exception {
    ObjectNode body = chat(4).put("continue_final_message", true);
    var r = LoopbackHttp.post(engine.baseUrl() + "/v1/chat/completions", body.toString());
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.body()).contains("continue_final_message");
  }

  @Test
  void wordVocabulary_keepsOnlyWordsThatRoundTripAloneAndInPairs() {
    // A tokenizer that holds "cd" as one token but makes something else of it next to a letter.
    SimTokenizer t = SimTokenizer.BYTES;
    AnswerTokens letters =
        AnswerTokens.fromWords(
            w ->
                w.equals("cd")
                    ? new int[] {999}
                    : w.contains("cd") ? new int[] {0} : t.encodePrompt(w),
            ids -> ids.length == 1 && ids[0] == 999 ? "cd" : t.decode(ids),
            List.of("a", "b", "cd"));
    assertThat(letters.ids()).containsExactly('a', 'b');
  }
}

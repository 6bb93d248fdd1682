package io.kvrouter.cli.dev;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.tokenize.ModelTokenizer;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.sim.AnswerTokens;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The demo model's simulated engine answers in words of the router's own tokenizer (o200k), so the
 * router encodes an answer's text back to the engine's ids, and renders a continued chat as the
 * uncut prompt followed by the answer so far: what a migration relies on.
 */
class ModelSimTokenizerTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void demoModel_answersInWordsThatEncodeBack_andAContinuedChatIsThePromptThenTheAnswer() {
    try (TokenizerRegistry registry = TokenizerRegistry.fromConfig(ConfigFactory.load())) {
      ModelTokenizer model = registry.find("kvrouter-demo").orElseThrow();
      ModelSimTokenizer sim = new ModelSimTokenizer(model);
      int[] vocab = sim.answerTokens().ids();
      assertThat(vocab.length).isGreaterThanOrEqualTo(AnswerTokens.WORDS.size() / 2);
      // An answer of vocabulary tokens: its text encodes back to its ids.
      int[] answer = new int[40];
      for (int i = 0; i < answer.length; i++) {
        answer[i] = vocab[(i * 7 + i / 3) % vocab.length];
      }
      String text = sim.decode(answer);
      assertThat(model.tokenizer().encode(text, false)).containsExactly(answer);

      ObjectNode uncut = JSON.createObjectNode();
      uncut.putArray("messages").addObject().put("role", "user").put("content", "Tell a story.");
      int[] prompt = sim.encodeChat(uncut, true);
      ObjectNode continued = uncut.deepCopy();
      ((ArrayNode) continued.get("messages"))
          .addObject()
          .put("role", "assistant")
          .put("content", text);
      int[] all = Arrays.copyOf(prompt, prompt.length + answer.length);
      System.arraycopy(answer, 0, all, prompt.length, answer.length);
      assertThat(sim.encodeChatContinued(continued)).containsExactly(all);
    }
  }
}

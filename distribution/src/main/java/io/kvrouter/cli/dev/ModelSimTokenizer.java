package io.kvrouter.cli.dev;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.ingress.tokenize.ModelTokenizer;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.protocol.keys.MediaPrompt;
import io.kvrouter.sim.AnswerTokens;
import io.kvrouter.sim.SimTokenizer;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A simulated engine that tokenizes like the real model: the router's tokenizer and chat template
 * for that model (from {@code kvrouter.models}), as a real vLLM uses the model's own. Chat
 * requests, which engines tokenize themselves, then yield exactly the token ids the router hashed.
 */
public final class ModelSimTokenizer implements SimTokenizer {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final ModelTokenizer model;
  private final AnswerTokens answers;

  public ModelSimTokenizer(ModelTokenizer model) {
    this.model = model;
    this.answers = answers(model);
  }

  /**
   * Answers in words the model's tokenizer holds as single tokens ({@link AnswerTokens#WORDS}), so
   * that the router encodes an answer's text back to its ids; a tokenizer with too few of them (one
   * that splits a leading space off, say) answers in the byte tokenizer's ids as before, rendered
   * by the model's tokenizer, which makes text the router does not encode back to those ids.
   */
  private static AnswerTokens answers(ModelTokenizer model) {
    try {
      return AnswerTokens.fromWords(
          w -> model.tokenizer().encode(w, false), model.tokenizer()::decode, AnswerTokens.WORDS);
    } catch (IllegalArgumentException tooFew) {
      return AnswerTokens.LETTERS;
    }
  }

  /** The model's tokenizer when the registry lists it; the sim's byte tokenizer otherwise. */
  public static SimTokenizer forModel(TokenizerRegistry registry, String model) {
    Optional<ModelTokenizer> found = registry.find(model);
    return found.<SimTokenizer>map(ModelSimTokenizer::new).orElse(SimTokenizer.BYTES);
  }

  @Override
  public int[] encodePrompt(String text) {
    return model.encodePrompt(text);
  }

  @Override
  public int[] encodeChat(JsonNode body, boolean addGenerationPrompt) {
    return model.tokenizer().encode(render(body, addGenerationPrompt), false);
  }

  /**
   * The chat rendered with the model's template (image parts as {@link MediaPrompt#MARKER}s, as the
   * router's {@code ChatContent} flattens them), then the text between markers encoded and each
   * marker expanded into the image's placeholder tokens, as the router does.
   */
  @Override
  public int[] encodeChat(JsonNode body, boolean addGenerationPrompt, MediaPrompt.Settings images) {
    return MediaPrompt.expand(
        render(body, addGenerationPrompt), images, t -> model.tokenizer().encode(t, false));
  }

  @Override
  public int[] encodeChatContinued(JsonNode body) {
    return model.tokenizer().encode(SimTokenizer.continueFinal(render(body, false), body), false);
  }

  /** Words of the model's own vocabulary, so that the router re-encodes answers to their ids. */
  @Override
  public AnswerTokens answerTokens() {
    return answers;
  }

  @SuppressWarnings("unchecked")
  private String render(JsonNode body, boolean addGenerationPrompt) {
    List<Map<String, Object>> messages = JSON.convertValue(body.get("messages"), List.class);
    JsonNode tools = body.get("tools");
    JsonNode kwargs = body.get("chat_template_kwargs");
    return model.renderChat(
        messages,
        tools == null || tools.isNull() ? null : JSON.convertValue(tools, List.class),
        addGenerationPrompt,
        kwargs == null || kwargs.isNull() ? Map.of() : JSON.convertValue(kwargs, Map.class));
  }

  @Override
  public String decode(int[] ids) {
    return model.tokenizer().decode(ids);
  }
}

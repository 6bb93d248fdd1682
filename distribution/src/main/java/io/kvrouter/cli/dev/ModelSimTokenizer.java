package io.kvrouter.cli.dev;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.ingress.tokenize.ModelTokenizer;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.protocol.keys.MediaPrompt;
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

  public ModelSimTokenizer(ModelTokenizer model) {
    this.model = model;
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

  /**
   * The sim generates synthetic token ids that spell letters in its byte tokenizer; they are
   * rendered that way, since they are no real model's output anyway.
   */
  @Override
  public String decode(int[] ids) {
    return SimTokenizer.BYTES.decode(ids);
  }
}

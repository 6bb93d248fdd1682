package io.kvrouter.ingress.tokenize;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Everything the request path needs to turn one model's request into token ids: its tokenizer, its
 * chat template and its limits.
 *
 * <p>Immutable and thread-safe. {@link #encodeChat} costs one template render plus one encode.
 *
 * @param name the model name clients send
 * @param tokenizer text to ids
 * @param chatTemplate conversation to text
 * @param blockSize tokens per KV block (the engine's block size)
 * @param maxModelLen the longest prompt plus completion the model accepts
 */
public record ModelTokenizer(
    String name,
    PromptTokenizer tokenizer,
    ChatTemplate chatTemplate,
    int blockSize,
    int maxModelLen) {

  /** Checks that nothing is missing and the limits are positive. */
  public ModelTokenizer {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(tokenizer, "tokenizer");
    Objects.requireNonNull(chatTemplate, "chatTemplate");
    if (blockSize <= 0 || maxModelLen <= 0) {
      throw new IllegalArgumentException("blockSize and maxModelLen must be positive");
    }
  }

  /**
   * Renders a chat conversation with the model's template.
   *
   * @see ChatTemplate#render
   */
  public String renderChat(
      List<Map<String, Object>> messages,
      List<Map<String, Object>> tools,
      boolean addGenerationPrompt,
      Map<String, Object> kwargs) {
    return chatTemplate.render(messages, tools, addGenerationPrompt, kwargs);
  }

  /**
   * Renders a chat conversation and encodes it without adding special tokens (the template writes
   * them), as vLLM does for chat completions.
   *
   * @return the prompt's token ids
   * @throws ChatTemplateException if the template rejects the conversation
   */
  public int[] encodeChat(
      List<Map<String, Object>> messages,
      List<Map<String, Object>> tools,
      boolean addGenerationPrompt,
      Map<String, Object> kwargs) {
    return tokenizer.encode(renderChat(messages, tools, addGenerationPrompt, kwargs), false);
  }

  /**
   * Encodes a raw completions prompt, adding the tokenizer's special tokens as vLLM does for {@code
   * /v1/completions}.
   */
  public int[] encodePrompt(String prompt) {
    return tokenizer.encode(prompt, true);
  }
}

package io.kvrouter.ingress.tokenize;

import io.kvrouter.protocol.keys.MediaPrompt;
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
 * @param images how the model's engine expands and names images in chats ({@link MediaPrompt})
 */
public record ModelTokenizer(
    String name,
    PromptTokenizer tokenizer,
    ChatTemplate chatTemplate,
    int blockSize,
    int maxModelLen,
    MediaPrompt.Settings images) {

  /** A model whose images expand as {@link MediaPrompt.Settings#DEFAULTS} says. */
  public ModelTokenizer(
      String name,
      PromptTokenizer tokenizer,
      ChatTemplate chatTemplate,
      int blockSize,
      int maxModelLen) {
    this(name, tokenizer, chatTemplate, blockSize, maxModelLen, MediaPrompt.Settings.DEFAULTS);
  }

  /** Checks that nothing is missing and the limits are positive. */
  public ModelTokenizer {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(tokenizer, "tokenizer");
    Objects.requireNonNull(chatTemplate, "chatTemplate");
    Objects.requireNonNull(images, "images");
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
   * them), as vLLM does for chat completions; each image part, a {@link MediaPrompt#MARKER} in the
   * rendered text, becomes its placeholder tokens ({@link #encodeRendered}).
   *
   * @return the prompt's token ids
   * @throws ChatTemplateException if the template rejects the conversation
   */
  public int[] encodeChat(
      List<Map<String, Object>> messages,
      List<Map<String, Object>> tools,
      boolean addGenerationPrompt,
      Map<String, Object> kwargs) {
    return encodeRendered(renderChat(messages, tools, addGenerationPrompt, kwargs));
  }

  /**
   * Encodes rendered chat text without special tokens, each {@link MediaPrompt#MARKER} expanded
   * into {@link #images}' placeholder tokens ({@link MediaPrompt#expand}).
   */
  public int[] encodeRendered(String rendered) {
    return MediaPrompt.expand(rendered, images, t -> tokenizer.encode(t, false));
  }

  /**
   * Encodes a raw completions prompt, adding the tokenizer's special tokens as vLLM does for {@code
   * /v1/completions}.
   */
  public int[] encodePrompt(String prompt) {
    return tokenizer.encode(prompt, true);
  }
}

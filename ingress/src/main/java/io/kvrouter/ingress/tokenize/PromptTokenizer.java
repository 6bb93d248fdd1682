package io.kvrouter.ingress.tokenize;

/**
 * Text to token ids and back for one model's vocabulary.
 *
 * <p>Implementations are thread-safe: the HTTP layer encodes many requests at once.
 */
public interface PromptTokenizer {

  /**
   * Encodes text.
   *
   * @param text any string, even malformed UTF-16 (a lone surrogate is encoded as a replacement
   *     character or {@code ?}, never an error); special-token markup such as {@code <|im_start|>}
   *     becomes the special token where the vocabulary has it (Hugging Face), or plain text
   *     (tiktoken)
   * @param addSpecialTokens whether to add the tokens the tokenizer's post-processor adds (BOS and
   *     the like) — {@code true} for a raw completions prompt, {@code false} for text produced by a
   *     chat template, which already holds them (vLLM does the same)
   * @return the token ids, a new array owned by the caller
   */
  int[] encode(String text, boolean addSpecialTokens);

  /**
   * Decodes token ids to text, special tokens included.
   *
   * @param ids token ids of this vocabulary
   * @return the text; Hugging Face tokenizers skip ids outside the vocabulary
   * @throws IllegalArgumentException if an id is outside a tiktoken vocabulary
   */
  String decode(int[] ids);

  /** A short description for logs and errors, e.g. {@code hf:/models/qwen3/tokenizer.json}. */
  String description();
}

package io.kvrouter.ingress.tokenize;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * A Hugging Face {@code tokenizer.json} run in-process by DJL's binding of the Rust {@code
 * tokenizers} library, so ids match what vLLM and SGLang compute from the same file.
 *
 * <p>Loaded with truncation and padding off (a prompt longer than the model accepts must be
 * rejected by the caller with its full length, never cut silently) and always offline ({@link
 * DjlOffline}); the file is read from disk, never fetched.
 *
 * <p>Thread-safe: the Rust tokenizer is immutable after loading and DJL's {@code encode} passes
 * only the native handle (checked by a concurrency test). Cost: a few hundred thousand tokens per
 * second per thread on one long string ({@code TokenizerThroughput} in the tests); loading Qwen3's
 * {@code tokenizer.json} takes about half a second. {@link #close()} frees the native tokenizer;
 * encoding after close fails.
 */
public final class HfPromptTokenizer implements PromptTokenizer, AutoCloseable {

  private final HuggingFaceTokenizer tokenizer;
  private final String description;

  private HfPromptTokenizer(HuggingFaceTokenizer tokenizer, String description) {
    this.tokenizer = tokenizer;
    this.description = description;
  }

  /**
   * Loads a tokenizer.
   *
   * @param tokenizerJson the {@code tokenizer.json} file
   * @throws TokenizerConfigException if the file is missing, unreadable or not a tokenizer
   */
  public static HfPromptTokenizer load(Path tokenizerJson) {
    DjlOffline.ensure();
    if (!Files.isRegularFile(tokenizerJson)) {
      throw new TokenizerConfigException("tokenizer file not found: " + tokenizerJson);
    }
    Map<String, String> options =
        Map.of(
            "addSpecialTokens", "true",
            "truncation", "false",
            "padding", "false");
    try {
      return new HfPromptTokenizer(
          HuggingFaceTokenizer.newInstance(tokenizerJson, options), "hf:" + tokenizerJson);
    } catch (IOException | RuntimeException e) {
      throw new TokenizerConfigException(
          "cannot load tokenizer " + tokenizerJson + ": " + e.getMessage(), e);
    }
  }

  @Override
  public int[] encode(String text, boolean addSpecialTokens) {
    Encoding encoding = tokenizer.encode(text, addSpecialTokens, false);
    long[] ids = encoding.getIds();
    int[] out = new int[ids.length];
    for (int i = 0; i < ids.length; i++) {
      out[i] = (int) ids[i];
    }
    return out;
  }

  @Override
  public String decode(int[] ids) {
    long[] wide = new long[ids.length];
    for (int i = 0; i < ids.length; i++) {
      wide[i] = ids[i];
    }
    return tokenizer.decode(wide, false);
  }

  @Override
  public String description() {
    return description;
  }

  /** Frees the native tokenizer. Idempotent. */
  @Override
  public void close() {
    tokenizer.close();
  }
}

package io.kvrouter.ingress.tokenize;

import com.typesafe.config.Config;
import io.kvrouter.protocol.keys.MediaPrompt;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * Where and how the request path tokenizes: on a dedicated pool ({@code
 * kvrouter.ingress.tokenize.dispatcher}), never on the HTTP dispatcher, so a 128k-token prompt does
 * not hold up the threads that accept and relay streams; chat prompts through the {@link
 * ChatPrefixCache}.
 *
 * <p>One tokenizer instance per model serves every pool thread: jtokkit encodings, {@link
 * O200kAsciiEncoder}, DJL's Hugging Face tokenizer (its native handle is immutable; {@code
 * ConcurrentEncodeTest}) and jinjava renders (a fresh interpreter each) are all thread-safe, so
 * nothing needs a per-thread copy.
 */
public final class PromptEncoder {

  /** The HOCON path of the settings. */
  public static final String CONFIG_PATH = "kvrouter.ingress.tokenize";

  /** The HOCON path of the pool, a Pekko dispatcher definition. */
  public static final String DISPATCHER = CONFIG_PATH + ".dispatcher";

  private final Executor pool;
  private final ChatPrefixCache cache;

  /**
   * @param pool the threads that tokenize
   * @param cache chat prefixes seen before
   */
  public PromptEncoder(Executor pool, ChatPrefixCache cache) {
    this.pool = pool;
    this.cache = cache;
  }

  /** Reads {@code prefix-cache-bytes} of {@value #CONFIG_PATH}; the pool comes from the system. */
  public static PromptEncoder fromConfig(Config config, Executor pool, TokenizerRegistry registry) {
    return new PromptEncoder(
        pool, new ChatPrefixCache(registry, config.getBytes(CONFIG_PATH + ".prefix-cache-bytes")));
  }

  /** Runs {@code work} (which tokenizes) on the pool. */
  public <T> CompletionStage<T> onPool(Supplier<T> work) {
    return CompletableFuture.supplyAsync(work, pool);
  }

  /**
   * The ids of a chat conversation rendered with {@code model}'s template, re-using cached turns
   * (not for a chat with images, whose placeholders {@link ModelTokenizer#encodeRendered} expands).
   *
   * @throws ChatTemplateException if the template rejects the conversation
   */
  public int[] encodeChat(
      ModelTokenizer model,
      List<Map<String, Object>> messages,
      List<Map<String, Object>> tools,
      boolean addGenerationPrompt,
      Map<String, Object> kwargs) {
    String rendered = model.renderChat(messages, tools, addGenerationPrompt, kwargs);
    if (rendered.contains(MediaPrompt.MARKER)) {
      // images: their placeholder tokens split the text, which the turn cache does not know
      return model.encodeRendered(rendered);
    }
    return cache.encode(model, rendered);
  }

  /** The cache, for metrics and tests. */
  public ChatPrefixCache cache() {
    return cache;
  }
}

package io.kvrouter.ingress.tokenize;

import com.typesafe.config.Config;
import io.kvrouter.protocol.keys.MediaPrompt;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * Where and how the request path tokenizes: a request whose body is at most {@code
 * inline-max-bytes} on the thread that read it (its prompt tokenizes in well under a millisecond,
 * less than the hand-off to another thread costs), a longer one on a dedicated pool ({@code
 * kvrouter.ingress.tokenize.dispatcher}), not on the HTTP dispatcher, so a 128k-token prompt does
 * not hold up the threads that accept and relay streams; chat prompts through the {@link
 * ChatPrefixCache}. A longer chat body is rendered and looked up in the cache on the caller's
 * thread first ({@link #encodeChatStaged}): only what the cache lacks decides where it is
 * tokenized.
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
  private final long inlineMaxBytes;

  /**
   * @param pool the threads that tokenize
   * @param cache chat prefixes seen before
   * @param inlineMaxBytes the longest body tokenized on the caller's thread (-1: none)
   */
  public PromptEncoder(Executor pool, ChatPrefixCache cache, long inlineMaxBytes) {
    this.pool = pool;
    this.cache = cache;
    this.inlineMaxBytes = inlineMaxBytes;
  }

  /** Every request on the pool. */
  public PromptEncoder(Executor pool, ChatPrefixCache cache) {
    this(pool, cache, -1);
  }

  /**
   * Reads {@code prefix-cache-bytes} and {@code inline-max-bytes} of {@value #CONFIG_PATH}; the
   * pool comes from the system.
   */
  public static PromptEncoder fromConfig(Config config, Executor pool, TokenizerRegistry registry) {
    return new PromptEncoder(
        pool,
        new ChatPrefixCache(registry, config.getBytes(CONFIG_PATH + ".prefix-cache-bytes")),
        config.getBytes(CONFIG_PATH + ".inline-max-bytes"));
  }

  /** Runs {@code work} (which tokenizes) on the pool. */
  public <T> CompletionStage<T> onPool(Supplier<T> work) {
    return CompletableFuture.supplyAsync(work, pool);
  }

  /**
   * Runs {@code work}, which tokenizes a request whose body is {@code bodyBytes} long: on the
   * caller's thread when that is at most {@code inline-max-bytes} (its failure in the stage, as on
   * the pool), else on the pool.
   */
  public <T> CompletionStage<T> forBody(long bodyBytes, Supplier<T> work) {
    if (bodyBytes > inlineMaxBytes) {
      return onPool(work);
    }
    try {
      return CompletableFuture.completedFuture(work.get());
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(new CompletionException(e)); // as supplyAsync fails
    }
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
    return prepare(model, messages, tools, addGenerationPrompt, kwargs).finish().get();
  }

  /**
   * The ids of a chat conversation, as {@link #encodeChat}, in a stage: the template's rendering
   * and the cache's lookup on the caller's thread (linear in the text, as reading the body was),
   * then the tokenizing of what the cache lacks there too when that is at most {@code
   * inline-max-bytes} chars (a conversation sent again, or its next turn), else on the pool.
   *
   * @throws ChatTemplateException if the template rejects the conversation (on the caller's thread)
   */
  public CompletionStage<int[]> encodeChatStaged(
      ModelTokenizer model,
      List<Map<String, Object>> messages,
      List<Map<String, Object>> tools,
      boolean addGenerationPrompt,
      Map<String, Object> kwargs) {
    Prepared chat = prepare(model, messages, tools, addGenerationPrompt, kwargs);
    return forBody(chat.uncachedChars(), chat.finish());
  }

  /** A rendered chat: the chars still to tokenize, and what tokenizes them. */
  private record Prepared(long uncachedChars, Supplier<int[]> finish) {}

  private Prepared prepare(
      ModelTokenizer model,
      List<Map<String, Object>> messages,
      List<Map<String, Object>> tools,
      boolean addGenerationPrompt,
      Map<String, Object> kwargs) {
    String rendered = model.renderChat(messages, tools, addGenerationPrompt, kwargs);
    if (rendered.contains(MediaPrompt.MARKER)) {
      // images: their placeholder tokens split the text, which the turn cache does not know
      return new Prepared(rendered.length(), () -> model.encodeRendered(rendered));
    }
    ChatPrefixCache.Lookup lookup = cache.lookup(model, rendered);
    return new Prepared(lookup.uncachedChars(), lookup::finish);
  }

  /** The longest body tokenized on the caller's thread (-1: none). */
  public long inlineMaxBytes() {
    return inlineMaxBytes;
  }

  /** The cache, for metrics and tests. */
  public ChatPrefixCache cache() {
    return cache;
  }
}

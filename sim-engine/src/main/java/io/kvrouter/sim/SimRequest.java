package io.kvrouter.sim;

import io.kvrouter.protocol.keys.MediaPrompt;
import java.util.List;

/**
 * One generation request submitted to a {@link SimEngineCore}.
 *
 * <p>The prompt array is never mutated after the record is built.
 *
 * @param requestId unique among the core's live requests
 * @param promptTokens prompt token ids (non-negative), at least one
 * @param maxTokens tokens to generate, at least one (the sim never stops early: no EOS)
 * @param loraName LoRA adapter name (enters every block hash), or null
 * @param cacheSalt vLLM's {@code cache_salt} (enters the first block hash only), or null
 * @param media the prompt's images: each enters the hash of every block its placeholder tokens
 *     overlap, as {@code (identifier, offset from the block start)} ({@link MediaPrompt})
 * @param answers the vocabulary its output tokens come from ({@link AnswerTokens#LETTERS} when
 *     null)
 */
public record SimRequest(
    String requestId,
    int[] promptTokens,
    int maxTokens,
    String loraName,
    String cacheSalt,
    List<MediaPrompt.Item> media,
    AnswerTokens answers) {

  /** A request answering in {@link AnswerTokens#LETTERS}. */
  public SimRequest(
      String requestId,
      int[] promptTokens,
      int maxTokens,
      String loraName,
      String cacheSalt,
      List<MediaPrompt.Item> media) {
    this(requestId, promptTokens, maxTokens, loraName, cacheSalt, media, AnswerTokens.LETTERS);
  }

  /** A request without images. */
  public SimRequest(
      String requestId, int[] promptTokens, int maxTokens, String loraName, String cacheSalt) {
    this(requestId, promptTokens, maxTokens, loraName, cacheSalt, List.of());
  }

  public SimRequest {
    java.util.Objects.requireNonNull(requestId, "requestId");
    if (promptTokens == null || promptTokens.length == 0) {
      throw new IllegalArgumentException("prompt must hold at least one token");
    }
    if (maxTokens < 1) {
      throw new IllegalArgumentException("maxTokens must be at least 1, was " + maxTokens);
    }
    media = media == null ? List.of() : List.copyOf(media);
    answers = answers == null ? AnswerTokens.LETTERS : answers;
    for (MediaPrompt.Item m : media) {
      if (m.start() < 0 || m.length() <= 0 || m.start() + m.length() > promptTokens.length) {
        throw new IllegalArgumentException("image placeholders outside the prompt: " + m);
      }
    }
  }

  /** A request with no LoRA and no salt. */
  public static SimRequest of(String requestId, int[] promptTokens, int maxTokens) {
    return new SimRequest(requestId, promptTokens, maxTokens, null, null);
  }
}

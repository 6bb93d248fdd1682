package io.kvrouter.sim;

import io.kvrouter.protocol.engine.EngineEvent;
import io.kvrouter.protocol.keys.MediaPrompt;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The engine-side state of one request: its tokens (prompt then outputs), block table, block hashes
 * and progress. Owned by {@link SimEngineCore}; not thread-safe.
 *
 * <p>Implementation notes: tokens, block ids and hashes live in growable primitive arrays; {@code
 * digests} keeps the full 32-byte digest of the last hashed block because vLLM chains on full
 * digests (spec §2.3).
 */
final class SimSequence {

  final SimRequest request;
  final long arrivalMicros;
  final int promptLength;
  int[] tokens;
  int numTokens;
  int numComputed;
  int[] blockIds = new int[4];
  int numBlocks;
  long[] hashes = new long[4];
  int numHashes;
  byte[] lastDigest;
  int numRegistered;
  int outputs;
  int cachedPromptTokens = -1;
  boolean preemptedOnce;

  /**
   * The prompt's KV arrives from a prefill engine (disaggregation): at first admission every prompt
   * token but the last counts as computed; cleared by a preemption (then it recomputes locally).
   */
  boolean remotePrefill;

  SimSequence(SimRequest request, long arrivalMicros) {
    this.request = request;
    this.arrivalMicros = arrivalMicros;
    this.promptLength = request.promptTokens().length;
    this.tokens = Arrays.copyOf(request.promptTokens(), promptLength + request.maxTokens());
    this.numTokens = promptLength;
  }

  String id() {
    return request.requestId();
  }

  void appendToken(int token) {
    tokens[numTokens++] = token;
    outputs++;
  }

  void addBlock(int blockId) {
    if (numBlocks == blockIds.length) {
      blockIds = Arrays.copyOf(blockIds, blockIds.length * 2);
    }
    blockIds[numBlocks++] = blockId;
  }

  /** Hashes every full block of known tokens not hashed yet. */
  void extendHashes(VllmBlockHasher hasher, int blockSize) {
    int full = numTokens / blockSize;
    while (numHashes < full) {
      int i = numHashes;
      byte[] d =
          hasher.blockDigest(lastDigest, tokens, i * blockSize, blockSize, extraKeys(i, blockSize));
      lastDigest = d;
      if (numHashes == hashes.length) {
        hashes = Arrays.copyOf(hashes, hashes.length * 2);
      }
      hashes[numHashes++] = VllmBlockHasher.low64(d);
    }
  }

  /**
   * vLLM's extra keys of block {@code block}, in {@code generate_block_hash_extra_keys}' order
   * ({@code vllm/v1/core/kv_cache_utils.py}): the LoRA name, then each image whose placeholder
   * tokens overlap the block as {@code (identifier, image start - block start)}, then the cache
   * salt on block 0 only. Empty when none applies.
   */
  List<EngineEvent.ExtraKey> extraKeys(int block, int blockSize) {
    List<MediaPrompt.Item> media = request.media();
    if (request.loraName() == null
        && (request.cacheSalt() == null || block > 0)
        && media.isEmpty()) {
      return List.of();
    }
    List<EngineEvent.ExtraKey> extra = new ArrayList<>(2);
    if (request.loraName() != null) {
      extra.add(new EngineEvent.TextKey(request.loraName()));
    }
    long blockStart = (long) block * blockSize;
    for (MediaPrompt.Item m : media) {
      if (m.start() < blockStart + blockSize && m.start() + m.length() > blockStart) {
        extra.add(new EngineEvent.MediaKey(m.identifier(), m.start() - blockStart));
      }
    }
    if (block == 0 && request.cacheSalt() != null) {
      extra.add(new EngineEvent.TextKey(request.cacheSalt()));
    }
    return extra;
  }

  boolean prefillDone() {
    return numComputed >= numTokens;
  }

  /** True when {@code n} tokens scheduled now are one decode step (not a chunk of prefill). */
  boolean decodes(int n) {
    return n == 1 && outputs > 0 && numComputed == numTokens - 1;
  }

  /**
   * Samples the next output token at the end of a pass ({@code endMicros}), appends it and says
   * what was emitted: a function of the tokens before it ({@link AnswerTokens}).
   */
  Emission sample(long endMicros) {
    int index = outputs;
    int token = request.answers().next(tokens, numTokens);
    appendToken(token);
    return new Emission(
        id(),
        token,
        index,
        outputs >= request.maxTokens(),
        promptLength,
        cachedPromptTokens,
        endMicros,
        arrivalMicros);
  }
}

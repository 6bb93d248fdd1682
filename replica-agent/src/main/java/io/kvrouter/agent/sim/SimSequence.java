package io.kvrouter.agent.sim;

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
      byte[] d = hasher.blockDigest(lastDigest, tokens, i * blockSize, blockSize, extraKeys(i));
      lastDigest = d;
      if (numHashes == hashes.length) {
        hashes = Arrays.copyOf(hashes, hashes.length * 2);
      }
      hashes[numHashes++] = VllmBlockHasher.low64(d);
    }
  }

  /** vLLM's extra keys of block i: LoRA name, then cache salt on block 0 only. */
  private List<String> extraKeys(int block) {
    if (request.loraName() == null && (request.cacheSalt() == null || block > 0)) {
      return List.of();
    }
    List<String> extra = new ArrayList<>(2);
    if (request.loraName() != null) {
      extra.add(request.loraName());
    }
    if (block == 0 && request.cacheSalt() != null) {
      extra.add(request.cacheSalt());
    }
    return extra;
  }

  boolean prefillDone() {
    return numComputed >= numTokens;
  }
}

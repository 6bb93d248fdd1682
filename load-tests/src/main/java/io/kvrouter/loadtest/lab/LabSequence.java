package io.kvrouter.loadtest.lab;

import java.util.Arrays;

/**
 * Engine-side state of one request in a {@link LabEngine}: progress, held blocks and what the
 * engine measured. Owned by one engine; mutable; not thread-safe.
 *
 * <p>{@code held[i]} is the router key of block i when the request references it as a cached block,
 * or 0 when the block is anonymous (partial, output, or a duplicate of a concurrent request's
 * block). {@code keys} is shared and never mutated.
 */
final class LabSequence {

  final int requestIndex;
  final String requestId;
  final int router;
  final long[] keys;
  final int promptLength;
  final int maxTokens;
  final long arrivalMicros;
  int outputs;
  int numComputed;
  int numRegistered;
  long[] held;
  int numBlocks;
  int cachedPromptTokens = -1;
  long firstTokenMicros = -1;

  /**
   * The prompt's KV arrived from a prefill engine (disaggregation): at first admission every prompt
   * token but the last counts as computed, as vLLM's NIXL connector loads it.
   */
  boolean remotePrefill;

  /** The LoRA adapter the request runs with, or null for the base model. */
  String adapter;

  /**
   * A warm-up of a program's next turn ({@link LabEngine#submitWarm}): scheduled as any request,
   * its answer read by no one; {@code cancelled} (aborted) once that turn arrived.
   */
  boolean warm;

  /** A warm-up of the {@code +warmfree} control: its tokens add nothing to a pass's duration. */
  boolean free;

  boolean cancelled;

  /**
   * Place in the engine's waiting queue ({@link LabEngine#submit}): 0 queues it last (FCFS), else
   * it goes before every waiting request of a larger value.
   */
  long priority;

  LabSequence(
      int requestIndex,
      String requestId,
      int router,
      long[] keys,
      int promptLength,
      int maxTokens,
      long arrivalMicros) {
    if (promptLength < 1 || maxTokens < 1) {
      throw new IllegalArgumentException("prompt and output need at least one token");
    }
    this.requestIndex = requestIndex;
    this.requestId = requestId;
    this.router = router;
    this.keys = keys;
    this.promptLength = promptLength;
    this.maxTokens = maxTokens;
    this.arrivalMicros = arrivalMicros;
    // The prompt's blocks plus its output at 16 tokens a block: usually one allocation, and
    // addBlock grows it for smaller blocks.
    this.held = new long[Math.max(4, keys.length + 1 + maxTokens / 16 + 1)];
  }

  int numTokens() {
    return promptLength + outputs;
  }

  boolean decoding() {
    return outputs > 0 && numComputed == numTokens() - 1;
  }

  void addBlock(long key) {
    if (numBlocks == held.length) {
      held = Arrays.copyOf(held, held.length * 2);
    }
    held[numBlocks++] = key;
  }
}

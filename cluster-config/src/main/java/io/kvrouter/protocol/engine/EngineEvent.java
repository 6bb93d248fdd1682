package io.kvrouter.protocol.engine;

/**
 * One KV-cache event as an engine (vLLM, SGLang, or the simulated engine) puts it on the wire,
 * still in the engine's own hash space. Fields as in vLLM's {@code vllm/distributed/kv_events.py};
 * see {@code docs/kv-events.md}, section 2.
 */
public sealed interface EngineEvent
    permits EngineEvent.BlockStored, EngineEvent.BlockRemoved, EngineEvent.AllBlocksCleared {

  /**
   * vLLM's {@code BlockStored}: full blocks one request newly cached in one step.
   *
   * <p>Arrays are never mutated after the record is built.
   *
   * @param blockHashes engine hashes, unsigned 64-bit in a {@code long}
   * @param parentHash engine hash of the block before the first one, or {@code null} at block 0
   * @param tokenIds the tokens of the blocks, {@code blockHashes.length * blockSize} of them, or
   *     empty (offload connectors send none)
   * @param blockSize tokens per block
   * @param loraName LoRA adapter name, or {@code null}
   * @param medium {@code null} or "GPU", "CPU", ...
   * @param extraKeys per block, the extra inputs of its hash ({@link ExtraKey}s: adapter name,
   *     multimodal items, cache salt), an empty list for a block without any; {@code null} when the
   *     event does not say (older engines)
   * @param group the KV-cache group ({@code group_idx}; 0 when absent: a model with one group)
   * @param groupKind the group's kind ({@code kv_cache_spec_kind}: "full_attention",
   *     "sliding_window", ...), or {@code null} when absent
   * @param slidingWindow the group's window in tokens ({@code kv_cache_spec_sliding_window}), or 0
   */
  record BlockStored(
      long[] blockHashes,
      Long parentHash,
      int[] tokenIds,
      int blockSize,
      String loraName,
      String medium,
      java.util.List<java.util.List<ExtraKey>> extraKeys,
      int group,
      String groupKind,
      int slidingWindow)
      implements EngineEvent {

    /** A store of the only (full-attention) group, without extra keys. */
    public BlockStored(
        long[] blockHashes,
        Long parentHash,
        int[] tokenIds,
        int blockSize,
        String loraName,
        String medium) {
      this(blockHashes, parentHash, tokenIds, blockSize, loraName, medium, null, 0, null, 0);
    }

    /** True when the group is a sliding-window one (its blocks only count inside the window). */
    public boolean slidingWindowGroup() {
      return slidingWindow > 0
          || (groupKind != null
              && groupKind.toLowerCase(java.util.Locale.ROOT).contains("sliding"));
    }
  }

  /**
   * vLLM's {@code BlockRemoved}: blocks evicted, by engine hash.
   *
   * @param blockHashes engine hashes, unsigned 64-bit in a {@code long}; never mutated
   * @param medium {@code null} or "GPU", "CPU", ...
   * @param group the KV-cache group ({@code group_idx}; 0 when absent)
   */
  record BlockRemoved(long[] blockHashes, String medium, int group) implements EngineEvent {

    /** A removal from the only group. */
    public BlockRemoved(long[] blockHashes, String medium) {
      this(blockHashes, medium, 0);
    }
  }

  /**
   * One element of a block's extra hash inputs, as vLLM's {@code generate_block_hash_extra_keys}
   * ({@code vllm/v1/core/kv_cache_utils.py}) puts them into {@code extra_keys}: bare strings (the
   * adapter name, the cache salt), {@code (identifier, offset)} pairs for multimodal items, bytes
   * for prompt embeddings; newer main publishes them as tagged structs ({@code LoRAKey}, {@code
   * CacheSaltKey}, {@code MultiModalKey}, {@code PromptEmbedsKey}, {@code LegacyExtraKey} in {@code
   * vllm/distributed/kv_events.py}), decoded into the same forms.
   */
  sealed interface ExtraKey {}

  /** A bare string: an adapter name or a cache salt (vLLM does not tag them). */
  record TextKey(String value) implements ExtraKey {}

  /** A tagged adapter name ({@code LoRAKey}). */
  record LoraKey(String name) implements ExtraKey {}

  /** A tagged cache salt ({@code CacheSaltKey}). */
  record SaltKey(String salt) implements ExtraKey {}

  /**
   * A multimodal item: its identifier and its first token's offset relative to the block's first
   * token (negative when it started in an earlier block).
   */
  record MediaKey(String identifier, long offset) implements ExtraKey {}

  /** Anything else (prompt-embedding hashes, unknown shapes): the block cannot be keyed. */
  record OpaqueKey(String description) implements ExtraKey {}

  /** vLLM's {@code AllBlocksCleared}: the whole prefix cache was reset. */
  record AllBlocksCleared() implements EngineEvent {}
}

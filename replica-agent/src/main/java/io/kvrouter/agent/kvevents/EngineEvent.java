package io.kvrouter.agent.kvevents;

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
   */
  record BlockStored(
      long[] blockHashes,
      Long parentHash,
      int[] tokenIds,
      int blockSize,
      String loraName,
      String medium)
      implements EngineEvent {}

  /**
   * vLLM's {@code BlockRemoved}: blocks evicted, by engine hash.
   *
   * @param blockHashes engine hashes, unsigned 64-bit in a {@code long}; never mutated
   * @param medium {@code null} or "GPU", "CPU", ...
   */
  record BlockRemoved(long[] blockHashes, String medium) implements EngineEvent {}

  /** vLLM's {@code AllBlocksCleared}: the whole prefix cache was reset. */
  record AllBlocksCleared() implements EngineEvent {}
}

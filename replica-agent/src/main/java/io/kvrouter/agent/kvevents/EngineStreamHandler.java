package io.kvrouter.agent.kvevents;

import io.kvrouter.protocol.engine.EngineEventBatch;

/**
 * Receives one engine's KV-event stream from a {@link KvEventSubscriber}, in engine sequence order,
 * on the subscriber's thread. Implementations must be quick (no blocking I/O) and either confined
 * to that thread or thread-safe.
 */
public interface EngineStreamHandler {

  /** The next batch; {@code seq} is the engine's and increases by one unless a gap was reported. */
  void onBatch(long seq, EngineEventBatch batch);

  /**
   * The engine restarted and lost its cache (vLLM sends no AllBlocksCleared then), or an
   * interruption could not be shown harmless: forget everything delivered so far. Batches that
   * follow belong to the new engine process, from its seq 0.
   *
   * @param lastSeq the last seq delivered before (-1 when none)
   * @param newSeq the live seq that revealed the restart (a regression), or -1 when something else
   *     did (a changed process start time, a replay, an unproven interruption)
   */
  void onEngineRestart(long lastSeq, long newSeq);

  /**
   * Batches {@code [fromSeq, toSeq)} are lost for good (not live, not in the replay buffer). The
   * handler's view of the engine is incomplete from here on.
   */
  void onUnrecoverableGap(long fromSeq, long toSeq);
}

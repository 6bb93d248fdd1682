package io.kvrouter.protocol.engine;

import java.util.List;

/**
 * vLLM's {@code KVEventBatch}: {@code [ts, events, data_parallel_rank]}.
 *
 * @param timestamp seconds since the epoch (engine clock; virtual seconds in the lab)
 * @param events the events, in engine order (immutable list)
 * @param dpRank data-parallel rank, or {@code null} when the engine sent none
 */
public record EngineEventBatch(double timestamp, List<EngineEvent> events, Integer dpRank) {

  public EngineEventBatch {
    events = List.copyOf(events);
  }
}

package io.kvrouter.agent.kvevents;

import java.util.List;

/**
 * The engine's answer to one replay request: the batches it still buffers from the requested seq
 * on, in order, and whether the answer was whole (its end marker arrived in time). An answer that
 * is not whole says nothing about what the engine holds: the request is asked again, never taken as
 * a loss.
 *
 * @param batches the batches received, without the end marker
 * @param complete true when the end marker arrived
 */
public record EngineReplay(List<TransportFrames.Message> batches, boolean complete) {

  public EngineReplay {
    batches = List.copyOf(batches);
  }

  /** A whole answer. */
  public static EngineReplay of(List<TransportFrames.Message> batches) {
    return new EngineReplay(batches, true);
  }

  /** What arrived of an answer that was not whole in time (its batches in order, maybe none). */
  public static EngineReplay partial(List<TransportFrames.Message> batches) {
    return new EngineReplay(batches, false);
  }

  /** No (whole) answer in time. */
  public static EngineReplay unanswered() {
    return new EngineReplay(List.of(), false);
  }
}

package io.kvrouter.sim;

import io.kvrouter.protocol.engine.EngineEvent;
import java.util.ArrayList;
import java.util.List;

/**
 * The KV events one part of a simulated engine (its block pool, its sliding-window group, its CPU
 * tier) made since they were last taken: each part adds as it changes, and the engine drains every
 * part once per pass, in the order a consumer needs them.
 *
 * <p>Cost: amortised O(1) per event; a drain copies the events once. Not thread-safe: the engine
 * loop owns it.
 */
final class EventBuffer {

  private final List<EngineEvent> events = new ArrayList<>();

  void add(EngineEvent event) {
    events.add(event);
  }

  /** The events since the last drain, in the order added (an immutable list); clears them. */
  List<EngineEvent> drain() {
    if (events.isEmpty()) {
      return List.of();
    }
    List<EngineEvent> out = List.copyOf(events);
    events.clear();
    return out;
  }
}

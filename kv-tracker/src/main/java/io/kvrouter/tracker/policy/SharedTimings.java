package io.kvrouter.tracker.policy;

import java.util.Map;
import java.util.TreeMap;

/**
 * The timing models peer routers share under intents ({@code intents.enabled}), and the one every
 * router decides with: the model of the router whose id sorts first among this router and the peers
 * heard from lately. Routers that place each other's requests must predict alike, or two of them
 * place the same request on different replicas: each fitting its own model from its own first
 * tokens, eight routers in the lab disagreed on a quarter of those placements. A peer not heard
 * from within the horizon no longer leads.
 *
 * <p>Cost: O(peers) per lookup. Plain Java; not thread-safe.
 */
final class SharedTimings {

  private record Heard(EngineTiming timing, long atMillis, long horizonMillis) {}

  private final TreeMap<String, Heard> byRouter = new TreeMap<>();

  /** Peer {@code origin} shared {@code timing} at {@code nowMillis}. */
  void heard(String origin, EngineTiming timing, long nowMillis, long horizonMillis) {
    byRouter.put(origin, new Heard(timing, nowMillis, horizonMillis));
  }

  /**
   * The model to decide with at {@code nowMillis}: that of the first router by id among {@code
   * self} (whose model is {@code own}) and the peers heard from within their horizon.
   */
  EngineTiming leader(String self, EngineTiming own, long nowMillis) {
    for (Map.Entry<String, Heard> e = byRouter.firstEntry();
        e != null && e.getKey().compareTo(self) < 0;
        e = byRouter.higherEntry(e.getKey())) {
      Heard h = e.getValue();
      if (h.atMillis() >= nowMillis - h.horizonMillis()) {
        return h.timing();
      }
    }
    return own;
  }
}

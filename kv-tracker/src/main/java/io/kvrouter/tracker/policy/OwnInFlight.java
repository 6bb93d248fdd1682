package io.kvrouter.tracker.policy;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * This router's own requests in flight, per replica: reserved and not yet released. What {@link
 * NearTies#byOwnLoad} spreads evenly.
 *
 * <p>Cost: O(1) per reservation and release; at most {@value #MAX_TRACKED} requests remembered, the
 * oldest forgotten first. Not thread-safe: owned by one policy instance.
 */
final class OwnInFlight {

  /** Requests remembered at most; bounded against releases that never come (as the ledger's). */
  static final int MAX_TRACKED = 1 << 16;

  private int[] count = new int[16];
  private final Map<String, Integer> replicaOf =
      new LinkedHashMap<>(64, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Integer> eldest) {
          if (size() <= MAX_TRACKED) {
            return false;
          }
          count[eldest.getValue()] = Math.max(0, count[eldest.getValue()] - 1);
          return true;
        }
      };

  void reserved(String requestId, int replica) {
    if (replica < 0) {
      return;
    }
    Integer before = replicaOf.put(requestId, replica);
    if (before != null) {
      count[before]--;
    }
    if (replica >= count.length) {
      count = Arrays.copyOf(count, Math.max(replica + 1, 2 * count.length));
    }
    count[replica]++;
  }

  void released(String requestId) {
    Integer replica = replicaOf.remove(requestId);
    if (replica != null && replica < count.length) {
      count[replica] = Math.max(0, count[replica] - 1);
    }
  }

  /** A replica left: its requests no longer count. */
  void forget(int replica) {
    replicaOf.values().removeIf(r -> r == replica);
    if (replica < count.length) {
      count[replica] = 0;
    }
  }

  /** This router's requests in flight on {@code replica}. */
  int on(int replica) {
    return replica >= 0 && replica < count.length ? count[replica] : 0;
  }
}

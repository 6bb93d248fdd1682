package io.kvrouter.ingress.traffic;

import java.util.HashMap;
import java.util.Map;

/**
 * The prefill each replica still owes the requests this ingress routed there: per replica, the
 * prompt tokens the router predicted uncached ({@code tokens − predictedCachedTokens}) of the
 * requests whose prefill has not completed and that were not released. What a held program would
 * queue behind on its replica ({@link ProgramHold}'s queue test): the {@link #excess} of a replica
 * over the least-owed replica is the prefill a turn held there waits for beyond what it would wait
 * for elsewhere.
 *
 * <p>Only this ingress's requests are counted (another ingress's are not seen), and a replica is
 * known once a request went there. Cost: O(1) per {@link #add}/{@link #done}, O(replicas) per
 * {@link #excess}; two map entries per request in flight. Thread-safe (one lock).
 */
final class PrefillQueue {

  private record Owed(String replica, long tokens) {}

  private final Map<String, Owed> byReservation = new HashMap<>();
  private final Map<String, Long> byReplica = new HashMap<>();

  /** Reservation {@code id} on {@code replica} owes {@code uncachedTokens} of prefill. */
  synchronized void add(String id, String replica, long uncachedTokens) {
    done(id);
    long t = Math.max(0, uncachedTokens);
    byReservation.put(id, new Owed(replica, t));
    byReplica.merge(replica, t, Long::sum);
  }

  /** Reservation {@code id}'s prefill completed, or it was released: it owes nothing more. */
  synchronized void done(String id) {
    Owed o = byReservation.remove(id);
    if (o != null) {
      byReplica.merge(o.replica(), -o.tokens(), Long::sum);
    }
  }

  /** The uncached prefill owed on {@code replica}. */
  synchronized long owed(String replica) {
    return byReplica.getOrDefault(replica, 0L);
  }

  /** What {@code replica} owes beyond the least-owed replica known (0 when it is the least). */
  synchronized long excess(String replica) {
    long least = Long.MAX_VALUE;
    for (long t : byReplica.values()) {
      least = Math.min(least, t);
    }
    return least == Long.MAX_VALUE ? 0 : Math.max(0, owed(replica) - least);
  }
}

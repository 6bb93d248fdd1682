package io.kvrouter.ingress.strict;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * The authoritative count of one replica's admitted requests in strict mode, with leases.
 * Optimistic admission: a tracker that decided on the replica while seeing {@code expected} other
 * requests there is admitted only if the replica holds at most that many; otherwise another ingress
 * got there first and the tracker decides again. This serialises decisions on one replica across
 * all ingresses, so simultaneous routers cannot herd onto it.
 *
 * <p>Cost: O(1) per admit and leave, plus O(n) lease sweeping per admit for n held requests. Not
 * thread-safe (one per gate entity).
 */
public final class GateLedger {

  private final Map<String, Long> expiries = new HashMap<>();

  /** Admits when at most {@code expected} requests are held; returns whether it did. */
  public boolean admit(String requestId, int expected, long leaseMillis, long nowMillis) {
    sweep(nowMillis);
    if (expiries.containsKey(requestId)) {
      return true; // a retried ask: already admitted
    }
    if (expiries.size() > expected) {
      return false;
    }
    expiries.put(requestId, nowMillis + leaseMillis);
    return true;
  }

  /** The request ended. */
  public void leave(String requestId) {
    expiries.remove(requestId);
  }

  /** Requests held now. */
  public int inFlight() {
    return expiries.size();
  }

  private void sweep(long nowMillis) {
    for (Iterator<Long> it = expiries.values().iterator(); it.hasNext(); ) {
      if (it.next() <= nowMillis) {
        it.remove();
      }
    }
  }
}

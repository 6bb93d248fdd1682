package io.kvrouter.ingress.traffic;

import java.util.HashMap;
import java.util.Map;

/**
 * The other ingresses' router queues as last heard ({@link QueueHead}s): for each model, the most
 * pressing priority each of them is waiting with. A local request whose turn comes while a peer
 * waits with a strictly more pressing priority yields it ({@link #morePressing}), so that the
 * peer's request, which would otherwise only ask at its next recheck while this ingress's local
 * wake-ups always ask first, gets the capacity: priorities hold across ingresses, not only within
 * each. What is not refreshed within the TTL is forgotten (an ingress that stopped or left).
 *
 * <p>Thread-safe: written by the gossip actor, read on request threads; O(ingresses) per read.
 */
public final class PeerQueues {

  /** No peers heard (a front without a cluster). */
  public static final PeerQueues NONE = new PeerQueues(0);

  private record Heard(int priority, long expiresNanos) {}

  private final long ttlNanos;
  private final Map<String, Map<String, Heard>> byIngress = new HashMap<>();

  /**
   * @param ttlNanos how long a peer's head counts without being heard again
   */
  public PeerQueues(long ttlNanos) {
    this.ttlNanos = ttlNanos;
  }

  /** A peer's head for a model, heard at {@code nowNanos}. */
  public synchronized void heard(QueueHead head, long nowNanos) {
    Map<String, Heard> models = byIngress.computeIfAbsent(head.ingress(), i -> new HashMap<>());
    if (head.priority() == null) {
      models.remove(head.model());
    } else {
      models.put(head.model(), new Heard(head.priority(), nowNanos + ttlNanos));
    }
  }

  /** True when some peer waits for {@code model} with a priority more pressing than this one. */
  public synchronized boolean morePressing(String model, int priority, long nowNanos) {
    for (Map<String, Heard> models : byIngress.values()) {
      Heard h = models.get(model);
      if (h != null && h.priority() < priority && h.expiresNanos() > nowNanos) {
        return true;
      }
    }
    return false;
  }
}

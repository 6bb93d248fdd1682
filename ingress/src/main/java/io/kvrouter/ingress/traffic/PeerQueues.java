package io.kvrouter.ingress.traffic;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.ToIntFunction;

/**
 * The other ingresses' router queues as last heard ({@link QueueHead}s): for each model, the most
 * pressing priority each of them waits with, the tenants waiting at it, and the requests each
 * tenant runs there. With it a turn is decided cluster-wide, not per ingress:
 *
 * <ul>
 *   <li>a local request whose turn comes yields it ({@link #ahead}) while a peer waits with a
 *       strictly more pressing priority, or at the same priority with a tenant whose slot share
 *       (requests it runs at every ingress, per unit of weight) is strictly lower than the local
 *       head's: otherwise the ingress whose own requests free capacity would always ask first (its
 *       queue is woken at once by its releases, a peer's only when it hears of them), the slots
 *       would stay with whichever ingress held them, and a tenant holding few of them at a peer
 *       would wait behind the tenant holding many here;
 *   <li>the slots a tenant holds at the other ingresses ({@link #running}) count in its share in
 *       the local order too;
 *   <li>a peer's released reservation (seen on the reservation plane) wakes the local queue's head
 *       ({@link #freed}), so the request it yielded to gets the freed slot without waiting for its
 *       recheck.
 * </ul>
 *
 * Equal claims yield to nobody (both ask; the router gives the slot to the first). What is not
 * refreshed within the TTL is forgotten (an ingress that stopped or left).
 *
 * <p>Thread-safe: written by the gossip actor, read on request threads; O(ingresses) per {@link
 * #running}, O(ingresses² × tenants waiting) per {@link #ahead} (both small). Listeners run on the
 * caller's thread, outside the lock.
 */
public final class PeerQueues {

  /** No peers heard (a front without a cluster). */
  public static final PeerQueues NONE = new PeerQueues(0);

  private record Heard(
      Integer priority,
      Map<String, Double> waiting,
      Map<String, Integer> running,
      long expiresNanos) {}

  private final long ttlNanos;
  private final Map<String, Map<String, Heard>> byIngress = new HashMap<>();
  private final List<Runnable> freedListeners = new CopyOnWriteArrayList<>();

  /**
   * @param ttlNanos how long a peer's head counts without being heard again
   */
  public PeerQueues(long ttlNanos) {
    this.ttlNanos = ttlNanos;
  }

  /**
   * A peer's head for a model, heard at {@code nowNanos}. True when that peer now waits for the
   * model and did not as last heard (it may need this ingress's running counts).
   */
  public synchronized boolean heard(QueueHead head, long nowNanos) {
    Map<String, Heard> models = byIngress.computeIfAbsent(head.ingress(), i -> new HashMap<>());
    Heard before = models.get(head.model());
    boolean waitedBefore =
        before != null && before.priority() != null && before.expiresNanos() > nowNanos;
    Map<String, Integer> running = head.running() == null ? Map.of() : head.running();
    if (head.priority() == null && running.isEmpty()) {
      models.remove(head.model());
    } else {
      models.put(
          head.model(),
          new Heard(
              head.priority(),
              head.waiting() == null ? Map.of() : head.waiting(),
              running,
              nowNanos + ttlNanos));
    }
    return head.priority() != null && !waitedBefore;
  }

  /** True while some peer waits for {@code model}. */
  public synchronized boolean waiting(String model, long nowNanos) {
    for (Map<String, Heard> models : byIngress.values()) {
      Heard h = models.get(model);
      if (h != null && h.priority() != null && h.expiresNanos() > nowNanos) {
        return true;
      }
    }
    return false;
  }

  /** Requests of {@code tenant} for {@code model} the peers run, as last heard. */
  public synchronized int running(String model, String tenant, long nowNanos) {
    int n = 0;
    for (Map<String, Heard> models : byIngress.values()) {
      Heard h = models.get(model);
      if (h != null && h.expiresNanos() > nowNanos) {
        n += h.running().getOrDefault(tenant, 0);
      }
    }
    return n;
  }

  /**
   * True when some peer waits for {@code model} with a claim stronger than the local head's: a more
   * pressing priority than {@code priority}, or the same with a tenant whose slot share is below
   * {@code share}.
   *
   * @param share the local head tenant's requests running at every ingress per unit of weight
   * @param here requests each tenant runs at this ingress
   */
  public synchronized boolean ahead(
      String model, int priority, double share, ToIntFunction<String> here, long nowNanos) {
    for (Map<String, Heard> models : byIngress.values()) {
      Heard h = models.get(model);
      if (h == null || h.priority() == null || h.expiresNanos() <= nowNanos) {
        continue;
      }
      if (h.priority() < priority) {
        return true;
      }
      if (h.priority() == priority) {
        for (Map.Entry<String, Double> w : h.waiting().entrySet()) {
          String tenant = w.getKey();
          double theirs =
              (here.applyAsInt(tenant) + running(model, tenant, nowNanos)) / w.getValue();
          if (theirs < share) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /** True when some peer waits for {@code model} with a more pressing priority than {@code p}. */
  public synchronized boolean morePressing(String model, int p, long nowNanos) {
    for (Map<String, Heard> models : byIngress.values()) {
      Heard h = models.get(model);
      if (h != null && h.priority() != null && h.expiresNanos() > nowNanos && h.priority() < p) {
        return true;
      }
    }
    return false;
  }

  /**
   * True when some peer waits for {@code model} at {@code priority} with a tenant other than {@code
   * tenant} whose slot share is above {@code share}.
   *
   * @param here requests each tenant runs at this ingress
   */
  public synchronized boolean busierWaiting(
      String model,
      int priority,
      String tenant,
      double share,
      ToIntFunction<String> here,
      long nowNanos) {
    for (Map<String, Heard> models : byIngress.values()) {
      Heard h = models.get(model);
      if (h == null || h.priority() == null || h.expiresNanos() <= nowNanos) {
        continue;
      }
      if (h.priority() == priority) {
        for (Map.Entry<String, Double> w : h.waiting().entrySet()) {
          String other = w.getKey();
          if (!other.equals(tenant)
              && (here.applyAsInt(other) + running(model, other, nowNanos)) / w.getValue()
                  > share) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /** Calls {@code listener} whenever a peer releases a reservation ({@link #freed}). */
  public void onFreed(Runnable listener) {
    if (this != NONE) {
      freedListeners.add(listener);
    }
  }

  /**
   * A peer released a reservation (its event reached this ingress's tracker): capacity may be free
   * for a request waiting here.
   */
  public void freed() {
    freedListeners.forEach(Runnable::run);
  }
}

package io.kvrouter.ingress.traffic;

import java.util.Collection;
import java.util.Map;
import java.util.function.ToIntFunction;

/**
 * When one request may pass another of a different tenant, decided from this ingress's {@link
 * FairQueue}s (one per model) and what the other ingresses wait with and run ({@link PeerQueues}):
 * which waiter a newcomer displaces when the router queue is full ({@link #victim}), and whether a
 * tenant below its fair share may go past a replica's busy threshold ({@link #belowFairShare}).
 *
 * <p>Stateless; the caller holds the lock that guards the queues. Cost: O(models) for {@link
 * #victim}, O(tenants) for {@link #belowFairShare}.
 */
public final class TenantPrecedence {

  private TenantPrecedence() {}

  /**
   * The least pressing waiter of all {@code queues}, if a newcomer at {@code priority} from {@code
   * tenant} beats it: it is more pressing (a lower priority value), or of equal priority from a
   * tenant holding fewer places in its own model's queue ({@code own}, null when that model has
   * none) than the victim's tenant holds, less one. Null when nobody may be displaced.
   */
  public static <T> FairQueue.Entry<T> victim(
      Collection<FairQueue<T>> queues, FairQueue<T> own, int priority, String tenant) {
    FairQueue.Entry<T> worst = null;
    int worstCount = 0;
    for (FairQueue<T> q : queues) {
      FairQueue.Entry<T> v = q.victim();
      if (v == null) {
        continue;
      }
      int count = q.count(v.priority(), v.tenant());
      if (worst == null
          || v.priority() > worst.priority()
          || (v.priority() == worst.priority() && count > worstCount)) {
        worst = v;
        worstCount = count;
      }
    }
    if (worst == null) {
      return null;
    }
    if (priority < worst.priority()) {
      return worst;
    }
    int mine = own == null ? 0 : own.count(priority, tenant);
    return priority == worst.priority() && worstCount > mine + 1 ? worst : null;
  }

  /**
   * True when a request of {@code tenant} (of {@code weight}) at {@code priority} may run past a
   * replica's busy threshold: another tenant waits for {@code model} at that priority, here ({@code
   * queue}, null when nothing waits here) or at another ingress, holding a larger slot share
   * cluster-wide than this tenant would with the request placed, and nothing waits at a more
   * pressing priority. Fair order alone cannot bound such a tenant's wait: when every slot is taken
   * it is first in line, yet waits for some request to end, up to a whole request's time when
   * requests of one shape end together. Allowed past the threshold it runs at once beside them; the
   * tenant holding more waits for the slots that free.
   */
  public static <T> boolean belowFairShare(
      FairQueue<T> queue,
      PeerQueues peers,
      String model,
      int priority,
      String tenant,
      double weight,
      long nowNanos) {
    Integer first = queue == null ? null : queue.firstPriority();
    if (first == null && !peers.waiting(model, nowNanos)) {
      return false; // nobody waits for the model anywhere: the usual case, and nothing to overtake
    }
    if ((first != null && first < priority) || peers.morePressing(model, priority, nowNanos)) {
      return false;
    }
    double mine =
        queue == null
            ? (peers.running(model, tenant, nowNanos) + 1) / weight
            : queue.share(tenant, weight, 1);
    if (first != null && first == priority) {
      for (Map.Entry<String, Double> w : queue.firstTenants().entrySet()) {
        if (!w.getKey().equals(tenant) && queue.share(w.getKey(), w.getValue(), 0) > mine) {
          return true;
        }
      }
    }
    ToIntFunction<String> here = queue == null ? t -> 0 : queue::running;
    return peers.busierWaiting(model, priority, tenant, mine, here, nowNanos);
  }
}

package io.kvrouter.tracker.policy;

/**
 * New prefixes lately started on each replica, by this router and as its peers' reservations of
 * whole prompts show: prompts no replica held any of, each the head of a family (a tenant's system
 * prompt, a conversation) whose later requests find it cached there and follow it. Counted with a
 * half-life, so a replica that has hosted few families lately is where the next one adds the least
 * lasting load ({@link NearTies#leastLoaded} for a lone router and for a cold lead among several,
 * {@code cold.family-half-life}).
 *
 * <p>Cost: O(1) per update and read. Not thread-safe: owned by one policy instance.
 */
final class PrefixFamilies {

  private final FadingValues started;

  /**
   * @param halfLifeMillis above 0
   */
  PrefixFamilies(double halfLifeMillis) {
    this.started = new FadingValues(halfLifeMillis);
  }

  /** Families started on {@code replica}, faded to {@code now}; 0 for one never used. */
  double on(int replica, long now) {
    return started.at(replica, now);
  }

  /** A new prefix was started on {@code replica} at {@code now}. */
  void started(int replica, long now) {
    started.set(replica, started.at(replica, now) + 1, now);
  }

  /** {@code replica} left, or its cache was emptied (a new engine): its families are gone. */
  void forget(int replica) {
    started.forget(replica);
  }
}

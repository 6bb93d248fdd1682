package io.kvrouter.tracker.policy;

/**
 * Per replica, the share of the prompt tokens recently placed there that its cache served: cached
 * tokens over cached plus written, each decayed with one half-life, from this router's decisions
 * and (from the reservation plane) its peers'. A replica whose recent requests mostly hit holds
 * prefixes that are being reused; the tokens a new request writes there evict its least recently
 * used blocks, which on such a replica are likelier to be needed again than on one whose recent
 * requests mostly wrote ({@link CostModel}'s eviction charge).
 *
 * <p>Cost: O(1) per update and read. Not thread-safe: owned by one policy instance.
 */
final class HitShare {

  private final FadingValues hit;
  private final FadingValues written;

  /**
   * @param halfLifeMillis above 0
   */
  HitShare(double halfLifeMillis) {
    this.hit = new FadingValues(halfLifeMillis);
    this.written = new FadingValues(halfLifeMillis);
  }

  /**
   * Records a request placed on {@code replica}: {@code cached} tokens hit, {@code own} written.
   */
  void add(int replica, double cached, double own, long now) {
    hit.set(replica, hit.at(replica, now) + Math.max(0, cached), now);
    written.set(replica, written.at(replica, now) + Math.max(0, own), now);
  }

  /** Cached over placed prompt tokens of {@code replica}, decayed to {@code now}; 0 if none. */
  double at(int replica, long now) {
    double h = hit.at(replica, now);
    double total = h + written.at(replica, now);
    return total > 0 ? h / total : 0;
  }

  /** The replica left: nothing placed there is counted. */
  void forget(int replica) {
    hit.forget(replica);
    written.forget(replica);
  }
}

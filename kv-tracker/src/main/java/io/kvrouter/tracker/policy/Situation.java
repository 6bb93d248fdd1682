package io.kvrouter.tracker.policy;

/**
 * Where a decision of the kvrouter policy stands among its peers: alone, among several routers that
 * cannot see it at once, or coordinated through intents. Read by the cost ranking and by the holds
 * alike, so the two never disagree on it. Not thread-safe: owned by its policy.
 */
final class Situation {

  private final PolicySettings s;
  private final PeerConcurrency peers;
  private final PeerIntents intents;
  private final TimingFit fit;

  Situation(PolicySettings s, PeerConcurrency peers, PeerIntents intents, TimingFit fit) {
    this.s = s;
    this.peers = peers;
    this.intents = intents;
    this.fit = fit;
  }

  /** Whether the decision is ungated and this router has heard from no peer. */
  boolean alone(RouteQuery query) {
    return !query.gated() && peers.routers(query.nowMillis()) <= 1;
  }

  /**
   * Whether the decision is taken among several routers that cannot see it at once: ungated, with
   * peers heard from, spreading on.
   */
  boolean amongPeers(RouteQuery query) {
    return !query.gated() && s.ties().spread() && peers.routers(query.nowMillis()) > 1;
  }

  /**
   * Whether the decision is ungated, among several routers, with intents on, and a peer announced
   * an intent or shared its timing lately: routers whose peers do not carry intents never wait for
   * them.
   */
  boolean intentsOn(RouteQuery query) {
    long now = query.nowMillis();
    // The setting first: a lone router (the decision benchmark's) stops there.
    return s.intents().enabled()
        && !query.gated()
        && intents.heardSince(now - s.peers().horizonMillis())
        && peers.routers(now) > 1;
  }

  /**
   * Under intents, whether a request whose least uncached prefill on any candidate is {@code
   * leastTokens} is announced to the peers (and held): its prefill takes {@code intents.from} or
   * more.
   */
  boolean announced(double leastTokens) {
    return fit.current().computeMillis(leastTokens) >= s.intents().fromMillis();
  }

  /** Whether {@code query} is announced to the peers as an intent, {@code least} uncached. */
  boolean told(RouteQuery query, double least) {
    return intentsOn(query) && announced(least);
  }

  /** The late propagation delay between the routers ({@link PeerConcurrency#lateDelayMillis}). */
  double lateDelayMillis() {
    return peers.lateDelayMillis(s.peers().delayPriorMillis());
  }
}

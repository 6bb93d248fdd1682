package io.kvrouter.tracker.policy;

import io.kvrouter.tracker.index.MatchResult;

/**
 * A policy's capability to coordinate with its peers before they decide: the router announces the
 * requests it holds (intents) and the policy places its peers' announced requests before its own,
 * all routers predicting with one shared timing model. The tracker calls these only on a policy
 * that implements this interface, and only while {@link #readsIntents} is true.
 */
public interface SharesIntents {

  /** Whether this policy reads its peers' intents now; the router then announces what it holds. */
  boolean readsIntents();

  /**
   * Whether a held request is told to the peers, given the fewest uncached prompt tokens it has on
   * any candidate, {@code leastUncached}.
   */
  boolean announces(double leastUncached);

  /** The prompt's uncached tokens on {@code replica}, as this policy counts them for an intent. */
  double uncachedTokens(RouteQuery query, MatchResult match, int replica);

  /**
   * A peer router announced at {@code nowMillis} that it will decide a request at a given time;
   * {@code uncached[i]} is the prompt's uncached tokens on {@code candidates[i]} as the peer saw
   * them.
   */
  void onPeerIntent(PeerIntent intent, int[] candidates, double[] uncached, long nowMillis);

  /**
   * A peer's reservation of a prompt of {@code promptTokens}, issued at {@code issuedMillis} (the
   * peer's clock), arrived at {@code nowMillis}: it ends the intent it decided.
   */
  void onPeerDecided(String origin, int promptTokens, long issuedMillis, long nowMillis);

  /** The timing model this router shares with its peers now, or null when it shares none. */
  EngineTiming timingToShare();

  /** Peer {@code origin}'s shared timing model arrived at {@code nowMillis}. */
  void onPeerTiming(String origin, EngineTiming timing, long nowMillis);

  /**
   * What a peer router announced of a request it holds: it will decide a prompt of {@code
   * promptTokens} at {@code decideAtMillis} (its clock).
   */
  record PeerIntent(String origin, long decideAtMillis, int promptTokens) {}
}

package io.kvrouter.tracker.policy;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;

/**
 * A routing policy: ranks candidate replicas for one request, best first. The caller routes to the
 * first and retries down the list. Plain Java, no clocks or threads of its own: time comes in the
 * query, randomness from the {@code RandomGenerator} it was built with, so the virtual-time lab can
 * run it deterministically.
 *
 * <p>Policies that keep approximate state of their own (built from routed requests, not engine
 * events) update it in {@link #onRouted}; the caller must call it once per placed request. Policies
 * that track the requests they placed until they finish (as Dynamo's active sequences do) also
 * receive {@link #onReserved}, {@link #onPrefillCompleted} and {@link #onReleased} for the requests
 * of their own router. {@link #visibility()} says what the router may show the policy.
 * Implementations are not thread-safe.
 */
public interface Policy {

  /** The name it is listed and created under (see {@link Policies#names()}). */
  String name();

  /**
   * Ranks {@code candidates} (replica indices, non-empty, no duplicates) best first.
   *
   * @param match the index's match of the query's keys (exact policies read it; approximate ones
   *     ignore it)
   * @param load per-replica load
   * @return a permutation of {@code candidates}
   */
  int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load);

  /** The request was placed on {@code replica}. */
  default void onRouted(RouteQuery query, MatchResult match, int replica) {}

  /**
   * This router reserved {@code replica} for request {@code requestId} (right after {@link
   * #onRouted}); its lifecycle follows through {@link #onPrefillCompleted} and {@link #onReleased}.
   */
  default void onReserved(String requestId, RouteQuery query, int replica) {}

  /**
   * The first token of an own request arrived.
   *
   * @param nowMillis the tracker's clock, or a negative value when the caller has none
   */
  default void onPrefillCompleted(String requestId, long nowMillis) {}

  /**
   * An own request finished (or its lease ended); forget it.
   *
   * @param nowMillis the tracker's clock, or a negative value when the caller has none
   */
  default void onReleased(String requestId, long nowMillis) {}

  /** The id of the router this policy decides for, once, before its first decision. */
  default void bindRouter(String routerId) {}

  /**
   * A peer router's reservation arrived at {@code nowMillis}: it placed a request of {@code
   * promptTokens}, {@code prefillTokens} of them uncached there, on {@code replica} at {@code
   * issuedMillis} (the peer's clock; 0 when unknown); {@code replica} is -1 for a replica this
   * tracker does not know yet (the reservation is held detached). Called only when {@link
   * Visibility#peerReservations()} lets the router show peers' reservations.
   */
  default void onPeerReserved(
      String origin,
      int replica,
      int prefillTokens,
      int promptTokens,
      long issuedMillis,
      long nowMillis) {}

  /**
   * Whether this policy reads its peers' intents ({@link #onPeerIntent}): the router then tells its
   * peers of each request it holds, as it arrives. False by default.
   */
  default boolean readsIntents() {
    return false;
  }

  /**
   * Whether a held request is told to the peers, given the fewest uncached prompt tokens it has on
   * any candidate, {@code leastUncached}: by default every held one when {@link #readsIntents}.
   */
  default boolean announces(double leastUncached) {
    return readsIntents();
  }

  /**
   * A peer router announced at {@code nowMillis} that it will decide a request at a given time
   * ({@code intent}); {@code uncached[i]} is the prompt's uncached tokens on {@code candidates[i]}
   * as the peer saw them. Called only when {@link #readsIntents}.
   */
  default void onPeerIntent(
      PeerIntent intent, int[] candidates, double[] uncached, long nowMillis) {}

  /**
   * What a peer router announced of a request it holds: it will decide a prompt of {@code
   * promptTokens} at {@code decideAtMillis} (its clock).
   */
  record PeerIntent(String origin, long decideAtMillis, int promptTokens) {}

  /**
   * The prompt's uncached tokens on {@code replica}, as this policy counts them (what an intent
   * tells the peers); {@code match} holds the prompt's prefix match. By default the tokens past the
   * matched blocks, at least 1.
   */
  default double uncachedTokens(RouteQuery query, MatchResult match, int replica) {
    return Math.max(1, query.promptTokens() - (double) match.matched(replica) * query.blockSize());
  }

  /**
   * A peer's reservation of a prompt of {@code promptTokens}, issued at {@code issuedMillis} (the
   * peer's clock), arrived at {@code nowMillis}: it ends the intent it decided. Called only when
   * {@link #readsIntents}.
   */
  default void onPeerDecided(String origin, int promptTokens, long issuedMillis, long nowMillis) {}

  /**
   * Under intents: the timing model this router shares with its peers now, or null when it shares
   * none (see {@link #onPeerTiming}).
   */
  default EngineTiming timingToShare() {
    return null;
  }

  /** Peer {@code origin}'s shared timing model arrived at {@code nowMillis}. */
  default void onPeerTiming(String origin, EngineTiming timing, long nowMillis) {}

  /**
   * A peer router's periodic mark arrived at {@code nowMillis}: {@code origin} is alive, whether or
   * not it has reserved anything yet (a policy that counts its peers knows them before the first
   * burst).
   */
  default void onPeerHeard(String origin, long nowMillis) {}

  /**
   * How long the router should wait before deciding {@code query} (ungated), ms; 0, the default:
   * decide now. The router asks once, then decides after the wait on the state of that moment.
   */
  default long holdMillis(RouteQuery query, int[] candidates, MatchResult match) {
    return 0;
  }

  /**
   * When a hold of {@code heldMillis} on {@code query} (its {@code nowMillis} now the hold's end)
   * runs out: how much longer the router should wait, ms; 0, the default: decide now. What arrived
   * during the hold may call for a longer one (TtftPolicy's cold leads look for company first). The
   * peers heard of the request, if at all, when it was first held.
   */
  default long holdMoreMillis(
      RouteQuery query, int[] candidates, MatchResult match, long heldMillis) {
    return 0;
  }

  /**
   * Whether {@link #holdMillis} can be above 0 for {@code query} whatever the prompt's cached
   * prefix: false spares the router matching the prompt for it (a lone router, a short prompt).
   */
  default boolean mayHold(RouteQuery query) {
    return false;
  }

  /** What the router may show this policy; kvrouter's own policy sees everything. */
  default Visibility visibility() {
    return Visibility.FULL;
  }

  /** The replica left; forget what the policy kept about it. */
  default void onReplicaRemoved(int replica) {}

  /**
   * The replica's stream began a new epoch: its engine restarted (or its agent did, or batches were
   * lost), and what the engine held is gone. What the policy learned of the replica's engine may
   * not hold for the new one.
   */
  default void onReplicaStartedAfresh(int replica) {}

  /**
   * How much later than predicted this router's first tokens from {@code replica} have lately come,
   * ms, as the policy keeps it at {@code nowMillis} (negative: earlier); 0, the default, for a
   * policy that keeps none. For operators: the part a policy charges shows why a replica is passed
   * over.
   */
  default double lagMillis(int replica, long nowMillis) {
    return 0;
  }
}

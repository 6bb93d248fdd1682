package io.kvrouter.tracker;

import io.kvrouter.protocol.RouteIntent;
import io.kvrouter.protocol.SharedTiming;
import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.policy.EngineTiming;
import io.kvrouter.tracker.policy.HoldsDecisions;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.RouteQuery;
import io.kvrouter.tracker.policy.SharesIntents;
import java.util.Arrays;

/**
 * What comes before a broadcast-mode decision, where the policy has the capabilities for it: how
 * long to hold the request ({@link HoldsDecisions}), what to tell the peers of it, and what the
 * peers told (intents and the shared timing model, {@link SharesIntents}). For a policy without a
 * capability its part does nothing: no hold, no intent. Not thread-safe: owned by its tracker.
 */
public final class Coordination {

  private final Membership replicas;
  private final Matcher matcher;
  private final HoldsDecisions holds;
  private final SharesIntents intents;
  private final MatchResult match = new MatchResult();

  Coordination(Policy policy, Membership replicas, Matcher matcher) {
    this.replicas = replicas;
    this.matcher = matcher;
    this.holds = policy instanceof HoldsDecisions h ? h : null;
    this.intents = policy instanceof SharesIntents i ? i : null;
  }

  /**
   * How long an ungated decision on {@code request} should wait before it is taken, ms ({@link
   * HoldsDecisions#holdMillis}); 0: decide now.
   */
  public long holdMillis(RouteRequest request, long nowMillis) {
    int[] candidates = matcher.candidates(request);
    RouteQuery query = holdable(request, candidates, nowMillis);
    return query == null ? 0 : holds.holdMillis(query, candidates, match);
  }

  /**
   * When a hold of {@code heldMillis} on {@code request} ends at {@code nowMillis}: how much longer
   * it should wait, ms ({@link HoldsDecisions#holdMoreMillis}); 0: decide now.
   */
  public long holdMoreMillis(RouteRequest request, long nowMillis, long heldMillis) {
    int[] candidates = matcher.candidates(request);
    RouteQuery query = holdable(request, candidates, nowMillis);
    return query == null ? 0 : holds.holdMoreMillis(query, candidates, match, heldMillis);
  }

  /**
   * The ungated query of {@code request}, its prefix matched into {@link #match}, when it has
   * {@code candidates} and the policy may hold it; null otherwise (most requests: no second prefix
   * match).
   */
  private RouteQuery holdable(RouteRequest request, int[] candidates, long nowMillis) {
    if (holds == null || candidates == null) {
      return null;
    }
    RouteQuery query = matcher.query(request, nowMillis, false);
    return holds.mayHold(query) ? matcher.matched(query, match) : null;
  }

  /** Whether the policy reads its peers' intents: the router then announces what it holds. */
  public boolean readsIntents() {
    return intents != null && intents.readsIntents();
  }

  /**
   * What this router tells its peers of {@code request}, which it holds and will decide at {@code
   * decideAtMillis}: the prompt's uncached tokens on each candidate that holds part of it, as the
   * policy counts them; null when the policy reads no intents or announces no such request, or the
   * request has no candidate. The origin is left for the reservation plane to stamp.
   */
  public RouteIntent intentOf(RouteRequest request, long decideAtMillis, long nowMillis) {
    int[] candidates = readsIntents() ? matcher.candidates(request) : null;
    if (candidates == null) {
      return null;
    }
    RouteQuery query = matcher.matched(matcher.query(request, nowMillis, false), match);
    double whole = Math.max(1, request.promptTokens());
    String[] holders = new String[candidates.length];
    int[] tokens = new int[candidates.length];
    int n = 0;
    double least = whole;
    for (int r : candidates) {
      double uncached = intents.uncachedTokens(query, match, r);
      least = Math.min(least, uncached);
      if (uncached < whole) {
        holders[n] = replicas.ids().idOf(r);
        tokens[n++] = (int) Math.ceil(uncached);
      }
    }
    if (!intents.announces(least)) {
      return null; // held for another reason than its peers' intents
    }
    return new RouteIntent(
        0L,
        decideAtMillis,
        request.model(),
        request.promptTokens(),
        Arrays.copyOf(holders, n),
        Arrays.copyOf(tokens, n));
  }

  /**
   * Peer {@code origin} will decide {@code intent}'s request: the policy hears of it, with the
   * uncached tokens the peer counted on each candidate that serves the model here (all the prompt's
   * tokens on a replica the peer did not list).
   */
  public void peerIntent(String origin, RouteIntent intent, long nowMillis) {
    if (!readsIntents()) {
      return;
    }
    int[] candidates = replicas.candidates(intent.model());
    if (candidates == null) {
      return;
    }
    double[] uncached = new double[candidates.length];
    Arrays.fill(uncached, Math.max(1, intent.promptTokens()));
    for (int j = 0; j < intent.replicaIds().length; j++) {
      int r = replicas.ids().indexOf(intent.replicaIds()[j]);
      for (int i = 0; i < candidates.length; i++) {
        if (candidates[i] == r) {
          uncached[i] = Math.max(1, intent.uncachedTokens()[j]);
        }
      }
    }
    intents.onPeerIntent(
        new SharesIntents.PeerIntent(origin, intent.decideAtMillis(), intent.promptTokens()),
        candidates,
        uncached,
        nowMillis);
  }

  /** A peer's reservation of a prompt arrived: under intents, it ends the intent it decided. */
  void peerDecided(String origin, int promptTokens, long issuedMillis, long nowMillis) {
    if (readsIntents()) {
      intents.onPeerDecided(origin, promptTokens, issuedMillis, nowMillis);
    }
  }

  /**
   * The timing model the policy shares with its peers now, in its wire form (the origin left for
   * the reservation plane to stamp), or null.
   */
  public SharedTiming timingToShare() {
    EngineTiming t = intents == null ? null : intents.timingToShare();
    return t == null
        ? null
        : new SharedTiming(0L, t.passMillis(), t.perKiloToken(), t.quadratic(), t.decodeScale());
  }

  /** Peer {@code origin}'s shared timing model arrived. */
  public void peerTiming(String origin, SharedTiming t, long nowMillis) {
    if (intents != null) {
      intents.onPeerTiming(
          origin,
          new EngineTiming(t.passMillis(), t.perKiloToken(), t.quadratic(), t.decodeScale()),
          nowMillis);
    }
  }
}

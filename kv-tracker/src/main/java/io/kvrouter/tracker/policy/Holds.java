package io.kvrouter.tracker.policy;

import io.kvrouter.tracker.index.MatchResult;

/**
 * How long the kvrouter policy makes its router wait before deciding an ungated request: the
 * decision holds ({@link DecisionHold}) and the cold leads.
 *
 * <p>Holds. Among several routers, a request whose uncached prefill is long waits a few propagation
 * delays, longer the longer it is, so the smaller requests other routers place in the same instant
 * reach this router first and neither queues behind the other unseen; while requests come in bursts
 * the threshold is lower and the step longer ({@code hold.burst}). A lone router holds such a
 * request {@code hold.solo} per size class instead, so the smaller requests that reached it in the
 * same instant are decided first, on their cache. Under intents, an announced request waits one
 * late propagation delay, so its peers hear of it before it is decided.
 *
 * <p>Cold leads ({@code cold.lead-from}). Among several routers, a prompt no replica holds any of,
 * arriving together with another such prompt, is decided at once only by the router first in turn;
 * the others hold it in steps of a late delay and a millisecond, up to one step per turn (at most
 * its own compute time), and follow as soon as a router before them has started its prefix: to the
 * replica holding the most of it, whatever the cost, when that is most of the prompt ({@code
 * cold.follow-share}), since the cost cannot see the followers still held on every router. One
 * still new at the end is decided on the view the wait brought ({@link #ledAt}). A lone new prompt
 * does not wait; the first of a burst to reach a router waits {@code cold.look} for company.
 *
 * <p>What the holds leave for the ranking: that a held prompt is to follow the prefix a peer
 * started ({@link #takeFollow}), or was led cold ({@link #ledAt}). Not thread-safe: owned by its
 * policy.
 */
final class Holds {

  private final PolicySettings s;
  private final PeerConcurrency peers;
  private final TimingFit fit;
  private final Situation situation;
  private final CostModel costs;
  // When the last prompt that could lead arrived, ms; none yet: MIN_VALUE.
  private long lastColdMillis = Long.MIN_VALUE;
  // The one before it, to tell company from the prompt itself.
  private long previousColdMillis = Long.MIN_VALUE;
  // When a cold lead's wait last ended: it is decided at once, on what the wait brought.
  private long coldLedMillis = Long.MIN_VALUE;
  // When a held cold lead last found most of its prompt started: decided next, on the holder.
  private long coldFollowMillis = Long.MIN_VALUE;
  // When a peer's reservation of a whole prompt (a prefix it started) last arrived.
  private long lastPeerStartMillis = Long.MIN_VALUE;

  Holds(
      PolicySettings s,
      PeerConcurrency peers,
      TimingFit fit,
      Situation situation,
      CostModel costs) {
    this.s = s;
    this.peers = peers;
    this.fit = fit;
    this.situation = situation;
    this.costs = costs;
  }

  /** Only a prompt that would wait uncached can wait: its cached prefix only shortens it. */
  boolean mayHold(RouteQuery query) {
    if (situation.intentsOn(query) || coldLeads(query)) {
      return true;
    }
    double from;
    if (situation.amongPeers(query)) {
      from = burstHold(query.nowMillis()) ? burstHoldFrom() : s.hold().fromMillis();
    } else if (situation.alone(query) && s.hold().soloMillis() > 0) {
      from = s.hold().fromMillis();
    } else {
      return false;
    }
    return from > 0 && fit.current().computeMillis(Math.max(1, query.promptTokens())) >= from;
  }

  /**
   * The first wait of {@code query}: its decision hold, its cold lead's first step, and under
   * intents one late delay for an announced request, whichever is longest.
   */
  long holdMillis(RouteQuery query, int[] candidates, MatchResult match) {
    if (!mayHold(query)) {
      return 0;
    }
    double least = costs.leastOwn(query, candidates, match);
    boolean intentsOn = situation.intentsOn(query);
    boolean peered = situation.amongPeers(query) || intentsOn;
    boolean burst = peered && burstHold(query.nowMillis());
    PolicySettings.Hold h = s.hold();
    long hold =
        DecisionHold.millis(
            fit.current().computeMillis(least),
            burst ? burstHoldFrom() : h.fromMillis(),
            h.classes(),
            burst ? h.burstStep() : peered ? h.step() : 1,
            peered ? situation.lateDelayMillis() : h.soloMillis(),
            h.maxMillis());
    hold = Math.max(hold, coldLeadMillis(query, least));
    if (intentsOn && situation.announced(least)) {
      double wait = Math.ceil(situation.lateDelayMillis()) + 1;
      hold = Math.max(hold, (long) Math.min(wait, h.maxMillis()));
    }
    return hold;
  }

  /**
   * How long a prompt no candidate holds any of ({@code least}, its fewest uncached tokens, is all
   * of it) waits first for the routers before this one in turn to start the prefixes of the same
   * burst: one step ({@link #coldStepMillis}), then more steps ({@link #holdMoreMillis}) while no
   * replica holds any of it, in all at most turn × step, the prompt's own compute time and {@code
   * hold.max}; 0 when it may not wait, is first in turn, or could not wait one step. It waits only
   * in company: when another such prompt reached this router within one step before it, the mark of
   * a batch or a fan-out whose siblings reach the peers too. A prompt alone so far looks for
   * company {@code cold.look} first. Records the arrival (called once per request, as it arrives).
   */
  private long coldLeadMillis(RouteQuery query, double least) {
    if (!coldLeads(query) || least < Math.max(1, query.promptTokens())) {
      return 0;
    }
    long now = query.nowMillis();
    boolean company = lastColdMillis != Long.MIN_VALUE && now - lastColdMillis <= coldStepMillis();
    previousColdMillis = lastColdMillis;
    lastColdMillis = now;
    if (peers.turn(query.nowMillis()) == 0 || coldWaitMillis(query) < coldStepMillis()) {
      return 0; // first in turn, or the routers before it could not be seen in time
    }
    if (situation.told(query, least)) {
      // Announced with the time it will be decided: one hold, the whole wait, and no look.
      return company ? (long) coldWaitMillis(query) : 0;
    }
    return company ? coldStep(query, 0) : (long) Math.ceil(s.cold().lookMillis());
  }

  /**
   * A prompt no candidate holds any of, held {@code heldMillis}, waits one more step of its cold
   * lead while no replica holds any of it yet, if another such prompt arrived since, or within a
   * step before it. Once a router before it has started the prefix it follows that at once.
   */
  long holdMoreMillis(RouteQuery query, int[] candidates, MatchResult match, long heldMillis) {
    if (!coldLeads(query)) {
      return 0;
    }
    double prompt = Math.max(1, query.promptTokens());
    double least = costs.leastOwn(query, candidates, match);
    if (least < prompt) {
      double follow = s.cold().followShare();
      if (follow > 0 && prompt - least >= follow * prompt) {
        coldFollowMillis = query.nowMillis(); // mostly the started prefix: decided on that
      }
      return 0; // started somewhere by now: it follows that
    }
    if (situation.told(query, prompt)) {
      return 0; // announced: decided when its peers expect it
    }
    long arrived = query.nowMillis() - heldMillis;
    // Its own arrival is the latest such one at most; a second one within the window is company.
    boolean company =
        previousColdMillis != Long.MIN_VALUE
            && previousColdMillis >= arrived - coldStepMillis()
            && lastColdMillis >= arrived;
    long more = company ? coldStep(query, heldMillis) : 0;
    if (more == 0 && company && lastPeerStartMillis >= arrived) {
      // Decided next, on the view the wait brought: a peer's start has come into view since it
      // arrived (not so behind a delay longer than the wait: it decides as blind as at once).
      coldLedMillis = query.nowMillis();
    }
    return more;
  }

  /**
   * Whether a held prompt decided at {@code nowMillis} is to follow the prefix a peer started
   * (whatever its cost); forgets it either way, as it holds for one decision.
   */
  boolean takeFollow(long nowMillis) {
    boolean follows = coldFollowMillis == nowMillis;
    coldFollowMillis = Long.MIN_VALUE;
    return follows;
  }

  /** Whether a cold lead's wait ended at {@code nowMillis}: it decides on the view it brought. */
  boolean ledAt(long nowMillis) {
    return coldLedMillis == nowMillis;
  }

  /** A peer's reservation of a whole prompt (a prefix it started) arrived at {@code nowMillis}. */
  void peerStarted(long nowMillis) {
    lastPeerStartMillis = nowMillis;
  }

  /** The next wait of a cold lead held {@code heldMillis}: a step, at most what is left. */
  private long coldStep(RouteQuery query, long heldMillis) {
    return (long) Math.max(0, Math.min(coldStepMillis(), coldWaitMillis(query) - heldMillis));
  }

  /** A cold lead's whole wait: turn × step, at most its own compute time and {@code hold.max}. */
  private double coldWaitMillis(RouteQuery query) {
    double compute = fit.current().computeMillis(Math.max(1, query.promptTokens()));
    double turns = peers.turn(query.nowMillis()) * coldStepMillis();
    return Math.min(turns, Math.min(compute, s.hold().maxMillis()));
  }

  /** A cold lead's step: a late delay and 1 ms, whole; also how close company arrives. */
  private double coldStepMillis() {
    return Math.ceil(situation.lateDelayMillis()) + 1;
  }

  /** Whether {@code query} may lead cold: among several routers, its prompt long enough. */
  private boolean coldLeads(RouteQuery query) {
    double from = s.cold().leadFromMillis();
    return from > 0
        && situation.amongPeers(query)
        && fit.current().computeMillis(Math.max(1, query.promptTokens())) >= from;
  }

  /**
   * Whether the hold among several routers takes its burst settings: holding is on, the burst
   * threshold is set, and this router's decisions have lately each been met by at least {@code
   * hold.burst.concurrency} peer decisions within one delay.
   */
  private boolean burstHold(long nowMillis) {
    PolicySettings.Hold h = s.hold();
    return h.fromMillis() > 0
        && h.burstFromMillis() > 0
        && peers.concurrentMean(nowMillis) >= h.burstConcurrency();
  }

  /** The threshold in bursts: the burst setting, never above the usual one. */
  private double burstHoldFrom() {
    return Math.min(s.hold().fromMillis(), s.hold().burstFromMillis());
  }
}

package io.kvrouter.tracker.policy;

import io.kvrouter.tracker.index.MatchResult;

/**
 * A policy's capability to make the router wait before it decides an ungated request, so that what
 * other routers decide in the same instant is seen first. The router asks {@link #mayHold} (to
 * spare a second prefix match for most requests), then {@link #holdMillis} once as the request
 * arrives, then {@link #holdMoreMillis} when each wait ends, and decides on the state of that
 * moment.
 */
public interface HoldsDecisions {

  /**
   * Whether {@link #holdMillis} can be above 0 for {@code query} whatever the prompt's cached
   * prefix: false spares the router matching the prompt for it.
   */
  boolean mayHold(RouteQuery query);

  /** How long the router should wait before deciding {@code query}, ms; 0: decide now. */
  long holdMillis(RouteQuery query, int[] candidates, MatchResult match);

  /**
   * When a hold of {@code heldMillis} on {@code query} (its time now the hold's end) runs out: how
   * much longer to wait, ms; 0: decide now.
   */
  long holdMoreMillis(RouteQuery query, int[] candidates, MatchResult match, long heldMillis);
}

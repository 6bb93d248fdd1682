package io.kvrouter.protocol;

/**
 * What routers whose policy reads intents tell each other, unsequenced, on {@link Topics#INTENTS}:
 * a request one of them holds and when it will decide it ({@link RouteIntent}), and the timing
 * model they all predict with ({@link SharedTiming}). Nothing here is replayed: a lost intent costs
 * its peers one placement they do not foresee, a lost timing model one interval on an older one.
 */
public sealed interface IntentMessage extends KryoWire permits RouteIntent, SharedTiming {

  /**
   * The origin ingress, as the Pekko {@code UniqueAddress.longUid} of its cluster member (as in
   * {@link CompactReservationEvent#origin}); 0 until the ingress's reservation plane stamps it.
   */
  long origin();

  /** This message stamped with {@code uid} as its origin. */
  IntentMessage from(long uid);
}

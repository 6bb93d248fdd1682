package io.kvrouter.tracker.ledger;

/**
 * A {@link LoadView} in which every replica counts {@code headroom} fewer reservations (never below
 * none): for one decision, the busy threshold on reservations ({@code max-in-flight}) moves up by
 * that much. The ingress asks for it for a request whose tenant holds less than its fair share of
 * slots while another tenant waits for one: that request may run beside a full replica's requests
 * instead of waiting for one of them to end. The other busy thresholds (the engine's reported KV
 * usage and waiting queue) stand. Only the count of reservations changes; the tokens they claim,
 * which the policies' costs read, do not.
 *
 * <p>Cost: O(1) per call. Not thread-safe: built per decision.
 */
public final class BusyHeadroom extends ForwardingLoadView {

  private final int headroom;

  /**
   * @param inner the decision's view
   * @param headroom reservations each replica may hold beyond the busy threshold, at least 1
   */
  public BusyHeadroom(LoadView inner, int headroom) {
    super(inner);
    if (headroom < 1) {
      throw new IllegalArgumentException("headroom must be >= 1, was " + headroom);
    }
    this.headroom = headroom;
  }

  @Override
  public int inFlight(int replica) {
    return Math.max(0, inner.inFlight(replica) - headroom);
  }
}

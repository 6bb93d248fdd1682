package io.kvrouter.protocol;

/**
 * One step of a request's reservation on the reservation plane, stamped by the tracker of the
 * ingress that made it. Peers apply the events of one origin in {@code seq} order.
 */
public sealed interface ReservationEvent extends KryoWire
    permits Reserved, PrefillCompleted, Released {

  /** The ingress node whose tracker made the decision. */
  String ingressId();

  /** 0, 1, 2, ... per origin ingress, without gaps. */
  long seq();

  /**
   * The reservation's name, unique per origin: the request's id, or, from an origin on the compact
   * wire ({@link CompactReservationEvent}), a name the tracker gives it after the seq of its {@link
   * Reserved} (every event of one origin names its reservations one way).
   */
  String requestId();
}

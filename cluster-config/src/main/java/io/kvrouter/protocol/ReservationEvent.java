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

  /** The request this reservation belongs to, unique per origin. */
  String requestId();
}

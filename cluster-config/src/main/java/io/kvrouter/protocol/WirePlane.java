package io.kvrouter.protocol;

import java.util.Locale;

/**
 * The plane a Kryo-serialized message belongs to, for counting the bytes each plane costs: the
 * reservation plane (ingress to ingress, intents included), the event plane (agents' KV event
 * batches and their replays and snapshots), load heartbeats, strict mode's admission gates, and the
 * rest (admin views).
 */
public enum WirePlane {
  RESERVATIONS,
  EVENTS,
  LOAD,
  GATE,
  OTHER;

  /** The plane of {@code message}. */
  public static WirePlane of(Object message) {
    if (message instanceof ReservationEvent
        || message instanceof CompactReservationEvent
        || message instanceof ReservationMark
        || message instanceof ReservationReplay
        || message instanceof ReplayReservations
        || message instanceof IntentMessage) {
      return RESERVATIONS;
    }
    if (message instanceof KvEventBatch
        || message instanceof ReplayReply
        || message instanceof RequestReplay) {
      return EVENTS;
    }
    if (message instanceof ReplicaLoad) {
      return LOAD;
    }
    if (message instanceof GateCommand) {
      return GATE;
    }
    return OTHER;
  }

  /** The name as a metric label: {@code reservations}, {@code events}, ... */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }
}

package io.kvrouter.protocol;

/** The request's first token arrived: its prefill load becomes decode load. */
public record PrefillCompleted(String ingressId, long seq, String requestId)
    implements ReservationEvent {}

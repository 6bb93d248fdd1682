package io.kvrouter.protocol;

/** The request ended (done, error, timeout or client gone): all its load is returned. */
public record Released(String ingressId, long seq, String requestId) implements ReservationEvent {}

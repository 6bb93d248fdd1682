package io.kvrouter.protocol;

/**
 * Marker for low-rate control messages (registrations, snapshots requests, admin queries) that
 * cross the wire as Jackson CBOR, where schema evolution matters more than bytes.
 */
public interface CborWire {}

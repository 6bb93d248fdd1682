package io.kvrouter.ingress.traffic;

import io.kvrouter.protocol.CborWire;

/**
 * Which replica a session is bound to, and when the binding was last written (it is forgotten a TTL
 * after that). A value of the replicated session map; it crosses between ingresses as Jackson CBOR.
 *
 * @param replica the replica's target id
 * @param touchedMillis wall-clock time of the last write
 */
public record SessionBinding(String replica, long touchedMillis) implements CborWire {}

package io.kvrouter.protocol;

/**
 * Marker for messages of the high-rate planes (KV events, reservations, load heartbeats) that cross
 * the wire through kvrouter's Kryo serializer.
 *
 * <p>A class carrying this marker must also be registered, with a fixed id, in {@code
 * io.kvrouter.config.serialization.KryoRegistrations}; an unregistered one is rejected at
 * serialization time with an error naming it.
 */
public interface KryoWire {}

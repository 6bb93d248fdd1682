package io.kvrouter.config.serialization;

import io.kvrouter.protocol.KryoWire;

/** A registered message (10002 in the test application.conf) whose component may hold anything. */
public record Carrier(Object inner) implements KryoWire {}

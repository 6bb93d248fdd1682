package io.kvrouter.config.serialization;

/**
 * Thrown when a message (or a value inside it) has a class that kvrouter's Kryo wire contract does
 * not list. Nothing is sent: silently serializing unknown classes would make the wire format depend
 * on class names and break rolling upgrades.
 */
public final class UnregisteredClassException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  UnregisteredClassException(String typeName, Object message, Throwable cause) {
    super(
        "kvrouter Kryo serializer: class "
            + typeName
            + " (in a "
            + message.getClass().getName()
            + ") is not registered. Add it with a new, never-used id to"
            + " io.kvrouter.config.serialization.KryoRegistrations (or, for tests and plug-ins,"
            + " to kvrouter.serialization.kryo.extra-registrations).",
        cause);
  }
}

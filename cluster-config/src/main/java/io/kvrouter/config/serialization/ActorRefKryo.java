package io.kvrouter.config.serialization;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Registration;

/**
 * A {@link Kryo} that resolves every implementation of Pekko's {@code ActorRef} (typed and classic:
 * local, remote, adapters, promise refs) to one registration each, so a record field declared as
 * {@code ActorRef<T>} needs no per-implementation entry.
 */
final class ActorRefKryo extends Kryo {

  @Override
  @SuppressWarnings("rawtypes")
  public Registration getRegistration(Class type) {
    if (type != org.apache.pekko.actor.typed.ActorRef.class
        && org.apache.pekko.actor.typed.ActorRef.class.isAssignableFrom(type)) {
      return super.getRegistration(org.apache.pekko.actor.typed.ActorRef.class);
    }
    if (type != org.apache.pekko.actor.ActorRef.class
        && org.apache.pekko.actor.ActorRef.class.isAssignableFrom(type)) {
      return super.getRegistration(org.apache.pekko.actor.ActorRef.class);
    }
    return super.getRegistration(type);
  }
}

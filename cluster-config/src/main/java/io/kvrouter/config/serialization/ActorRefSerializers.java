package io.kvrouter.config.serialization;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.Serialization;

/**
 * Kryo serializers for actor references: written as their full serialization path (with the node's
 * address), read back through the actor system's resolver, as Pekko's own serializers do.
 */
final class ActorRefSerializers {

  private ActorRefSerializers() {}

  /** Typed references, through {@link ActorRefResolver}. */
  static final class Typed extends Serializer<ActorRef<?>> {
    private final ActorRefResolver resolver;

    Typed(ExtendedActorSystem system) {
      super(false, true);
      this.resolver = ActorRefResolver.get(Adapter.toTyped(system));
    }

    @Override
    public void write(Kryo kryo, Output output, ActorRef<?> ref) {
      output.writeString(resolver.toSerializationFormat(ref));
    }

    @Override
    public ActorRef<?> read(Kryo kryo, Input input, Class<? extends ActorRef<?>> type) {
      return resolver.resolveActorRef(input.readString());
    }
  }

  /** Classic references, through the provider. */
  static final class Classic extends Serializer<org.apache.pekko.actor.ActorRef> {
    private final ExtendedActorSystem system;

    Classic(ExtendedActorSystem system) {
      super(false, true);
      this.system = system;
    }

    @Override
    public void write(Kryo kryo, Output output, org.apache.pekko.actor.ActorRef ref) {
      output.writeString(Serialization.serializedActorPath(ref));
    }

    @Override
    public org.apache.pekko.actor.ActorRef read(
        Kryo kryo, Input input, Class<? extends org.apache.pekko.actor.ActorRef> type) {
      return system.provider().resolveActorRef(input.readString());
    }
  }
}

package io.kvrouter.config.serialization;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import com.esotericsoftware.kryo.util.Pool;
import com.typesafe.config.Config;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.serialization.JSerializer;

/**
 * Pekko serializer for the high-rate planes: Kryo with registration required, so the wire carries
 * small integer class ids from {@link KryoRegistrations} instead of class names, and an
 * unregistered class fails with {@link UnregisteredClassException} instead of being sent.
 *
 * <p>Bound to {@link io.kvrouter.protocol.KryoWire} in {@code reference.conf}. Kryo instances are
 * not thread-safe, so each call borrows one from a {@link Pool}. Every message written or read is
 * counted, by plane, in the system's {@link WireTraffic}.
 *
 * <p>Wire layout of one message: Kryo's varint class id (id + 2) followed by the object as Kryo's
 * record serializer writes it: components in alphabetical order of their names, so renaming a
 * record component changes the wire format as much as changing its type. The identifier {@value
 * #IDENTIFIER} is part of the contract too.
 */
public final class KryoSerializer extends JSerializer {

  /** Pekko serializer identifier; never change it. */
  public static final int IDENTIFIER = 7301;

  private static final int INITIAL_BUFFER = 256;

  private final ExtendedActorSystem system;
  private final Map<Class<?>, Integer> extra;
  private final Pool<Kryo> pool;
  private final WireTraffic traffic;

  public KryoSerializer(ExtendedActorSystem system) {
    this.system = system;
    this.extra = extraRegistrations(system.settings().config());
    this.traffic = WireTraffic.get(system);
    this.pool =
        new Pool<>(true, false, 16) {
          @Override
          protected Kryo create() {
            return newKryo();
          }
        };
  }

  @Override
  public int identifier() {
    return IDENTIFIER;
  }

  @Override
  public boolean includeManifest() {
    return false;
  }

  @Override
  public byte[] toBinary(Object message) {
    long start = WireTraffic.threadCpuNanos();
    Kryo kryo = pool.obtain();
    try (Output output = new Output(INITIAL_BUFFER, -1)) {
      kryo.writeClassAndObject(output, message);
      byte[] bytes = output.toBytes();
      traffic.count(WireTraffic.Direction.SENT, message, bytes.length, start);
      return bytes;
    } catch (IllegalArgumentException | KryoException e) {
      String missing = unregisteredClassIn(e);
      if (missing != null) {
        throw new UnregisteredClassException(missing, message, e);
      }
      throw e;
    } finally {
      pool.free(kryo);
    }
  }

  @Override
  public Object fromBinaryJava(byte[] bytes, Class<?> manifest) {
    long start = WireTraffic.threadCpuNanos();
    Kryo kryo = pool.obtain();
    try (Input input = new Input(bytes)) {
      Object message = kryo.readClassAndObject(input);
      traffic.count(WireTraffic.Direction.RECEIVED, message, bytes.length, start);
      return message;
    } finally {
      pool.free(kryo);
    }
  }

  /** A Kryo instance with the whole wire contract registered; visible for tests. */
  Kryo newKryo() {
    Kryo kryo = new ActorRefKryo();
    kryo.setRegistrationRequired(true);
    kryo.setReferences(false);
    KryoRegistrations.builtIn().forEach(kryo::register);
    kryo.register(
        org.apache.pekko.actor.typed.ActorRef.class,
        new ActorRefSerializers.Typed(system),
        KryoRegistrations.TYPED_ACTOR_REF_ID);
    kryo.register(
        org.apache.pekko.actor.ActorRef.class,
        new ActorRefSerializers.Classic(system),
        KryoRegistrations.CLASSIC_ACTOR_REF_ID);
    extra.forEach(kryo::register);
    return kryo;
  }

  private static Map<Class<?>, Integer> extraRegistrations(Config config) {
    String path = "kvrouter.serialization.kryo.extra-registrations";
    Map<Class<?>, Integer> result = new LinkedHashMap<>();
    if (!config.hasPath(path)) {
      return result;
    }
    Config extras = config.getConfig(path);
    for (var entry : extras.root().entrySet()) {
      String className = entry.getKey();
      int id = extras.getInt("\"" + className + "\"");
      if (id < KryoRegistrations.FIRST_EXTRA_ID) {
        throw new IllegalArgumentException(
            path
                + ": id "
                + id
                + " for "
                + className
                + " must be >= "
                + KryoRegistrations.FIRST_EXTRA_ID);
      }
      try {
        result.put(Class.forName(className), id);
      } catch (ClassNotFoundException e) {
        throw new IllegalArgumentException(path + ": no class " + className, e);
      }
    }
    return result;
  }

  /** Kryo reports a missing registration as "Class is not registered: a.b.C" (possibly nested). */
  private static String unregisteredClassIn(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      String msg = t.getMessage();
      String marker = "Class is not registered: ";
      if (msg != null && msg.contains(marker)) {
        String rest = msg.substring(msg.indexOf(marker) + marker.length());
        return rest.split("\\s", 2)[0];
      }
    }
    return null;
  }
}

package io.kvrouter.config.serialization;

import io.kvrouter.protocol.WirePlane;
import java.util.concurrent.atomic.LongAdder;
import org.apache.pekko.actor.AbstractExtensionId;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Extension;
import org.apache.pekko.actor.ExtensionIdProvider;

/**
 * Bytes and messages that one actor system's {@link KryoSerializer} wrote (sent) and read
 * (received), by {@link WirePlane}. Pekko serializes a message once per remote recipient, so a
 * reservation published to three peers counts three times on the sender and once on each receiver.
 * The figures are the serializer's payload; the transport's framing (Artery's envelope, the
 * recipient's compressed path, the topic's wrapper) is not in them.
 *
 * <p>A Pekko extension (one per system), so the serializer Pekko creates and the node's metrics
 * find the same counters. Thread-safe: the serializer runs on the transport's threads, the metrics
 * read on scrape; every update is a {@link LongAdder} increment.
 */
public final class WireTraffic implements Extension {

  /** Which way a message crossed the wire, as seen from this system. */
  public enum Direction {
    SENT,
    RECEIVED;

    /** The name as a metric label. */
    public String label() {
      return this == SENT ? "sent" : "received";
    }
  }

  private static final Id ID = new Id();

  private final LongAdder[] bytes = adders();
  private final LongAdder[] messages = adders();

  private WireTraffic() {}

  /** The counters of {@code system}. */
  public static WireTraffic get(ActorSystem system) {
    return ID.get(system);
  }

  /** The counters of a typed {@code system}. */
  public static WireTraffic get(org.apache.pekko.actor.typed.ActorSystem<?> system) {
    return ID.get(system.classicSystem());
  }

  /** One message of {@code size} bytes crossed the wire. */
  public void count(Direction direction, Object message, int size) {
    int slot = slot(WirePlane.of(message), direction);
    bytes[slot].add(size);
    messages[slot].increment();
  }

  /** Bytes counted so far on {@code plane} in {@code direction}. */
  public long bytes(WirePlane plane, Direction direction) {
    return bytes[slot(plane, direction)].sum();
  }

  /** Messages counted so far on {@code plane} in {@code direction}. */
  public long messages(WirePlane plane, Direction direction) {
    return messages[slot(plane, direction)].sum();
  }

  private static int slot(WirePlane plane, Direction direction) {
    return plane.ordinal() * Direction.values().length + direction.ordinal();
  }

  private static LongAdder[] adders() {
    LongAdder[] a = new LongAdder[WirePlane.values().length * Direction.values().length];
    for (int i = 0; i < a.length; i++) {
      a[i] = new LongAdder();
    }
    return a;
  }

  /** The extension's id. */
  private static final class Id extends AbstractExtensionId<WireTraffic>
      implements ExtensionIdProvider {

    @Override
    public WireTraffic createExtension(ExtendedActorSystem system) {
      return new WireTraffic();
    }

    @Override
    public Id lookup() {
      return ID;
    }
  }
}

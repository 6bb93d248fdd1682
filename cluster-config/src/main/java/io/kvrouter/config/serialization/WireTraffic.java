package io.kvrouter.config.serialization;

import io.kvrouter.protocol.WirePlane;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
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
 *
 * <p>It also keeps a CPU account per plane: the thread CPU time this node spent encoding, decoding
 * and applying each plane's messages ({@link Work}), read with {@link #threadCpuNanos} before and
 * after the work. Process CPU cannot separate one plane from the cluster's background (gossip,
 * failure detection, JIT, GC), which on a shared machine moves more than the plane costs; this
 * account counts the plane's own work only. What it leaves out: the transport's framing and socket
 * I/O, and the topic's fan-out, which are per message and shared by every plane.
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

  /** What the CPU was spent on. */
  public enum Work {
    /** Kryo writing a message for the wire. */
    ENCODE,
    /** Kryo reading a message from the wire. */
    DECODE,
    /** The tracker applying a message it received to its state. */
    APPLY;

    /** The name as a metric label. */
    public String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  private static final Id ID = new Id();
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
  private static final boolean CPU_TIME = THREADS.isCurrentThreadCpuTimeSupported();

  private final LongAdder[] bytes = adders();
  private final LongAdder[] messages = adders();
  private final LongAdder[] cpuNanos = adders(WirePlane.values().length * Work.values().length);

  private WireTraffic() {}

  /** The counters of {@code system}. */
  public static WireTraffic get(ActorSystem system) {
    return ID.get(system);
  }

  /** The counters of a typed {@code system}. */
  public static WireTraffic get(org.apache.pekko.actor.typed.ActorSystem<?> system) {
    return ID.get(system.classicSystem());
  }

  /**
   * One message of {@code size} bytes crossed the wire; its encoding (sent) or decoding (received)
   * began when this thread's CPU time was {@code cpuStartNanos} ({@link #threadCpuNanos}).
   */
  public void count(Direction direction, Object message, int size, long cpuStartNanos) {
    WirePlane plane = WirePlane.of(message);
    int slot = slot(plane, direction);
    bytes[slot].add(size);
    messages[slot].increment();
    spent(
        plane,
        direction == Direction.SENT ? Work.ENCODE : Work.DECODE,
        cpuStartNanos,
        threadCpuNanos());
  }

  /** Bytes counted so far on {@code plane} in {@code direction}. */
  public long bytes(WirePlane plane, Direction direction) {
    return bytes[slot(plane, direction)].sum();
  }

  /** Messages counted so far on {@code plane} in {@code direction}. */
  public long messages(WirePlane plane, Direction direction) {
    return messages[slot(plane, direction)].sum();
  }

  /**
   * The calling thread's CPU time so far, ns (0 where the JVM cannot measure it): read it before
   * and after a piece of work and pass both to {@link #spent}.
   */
  public static long threadCpuNanos() {
    return CPU_TIME ? THREADS.getCurrentThreadCpuTime() : 0;
  }

  /**
   * The calling thread spent {@code endNanos - startNanos} of CPU on {@code work} for {@code
   * plane}.
   */
  public void spent(WirePlane plane, Work work, long startNanos, long endNanos) {
    if (endNanos > startNanos) {
      cpuNanos[plane.ordinal() * Work.values().length + work.ordinal()].add(endNanos - startNanos);
    }
  }

  /** CPU time counted so far on {@code work} for {@code plane}, ns. */
  public long cpuNanos(WirePlane plane, Work work) {
    return cpuNanos[plane.ordinal() * Work.values().length + work.ordinal()].sum();
  }

  private static int slot(WirePlane plane, Direction direction) {
    return plane.ordinal() * Direction.values().length + direction.ordinal();
  }

  private static LongAdder[] adders() {
    return adders(WirePlane.values().length * Direction.values().length);
  }

  private static LongAdder[] adders(int size) {
    LongAdder[] a = new LongAdder[size];
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

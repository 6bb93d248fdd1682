package io.kvrouter.loadtest.baselines;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The routers of one lab run as a peer's own router-to-router channel connects them: SMG's mesh
 * ({@link SmgMesh}), Dynamo's replica sync ({@link ReplicaSync}). The lab opens a group on its
 * thread while it builds a run's routers ({@link #open}); every baseline created meanwhile joins
 * the group's channel of its kind, so the K routers of a run hear each other and no other run's. A
 * baseline created with no group open (a lone ingress, a unit test) gets a group of its own, whose
 * channel has no peers.
 *
 * <p>Time is the policies' decision time (virtual in the lab): a channel delivers what a router
 * published to its peers when they next decide at or after its arrival time, never sooner.
 *
 * <p>Not thread-safe: one run's routers are decided on one thread.
 */
public final class PeerGroup implements AutoCloseable {

  private static final ThreadLocal<PeerGroup> OPEN = new ThreadLocal<>();

  private final long delayMillis;
  private final Map<String, Object> channels = new HashMap<>();

  private PeerGroup(long delayMillis) {
    this.delayMillis = delayMillis;
  }

  /**
   * Opens the group the baselines created on this thread join until {@link #close}.
   *
   * @param delayMicros the network delay between two routers (the lab's propagation delay), added
   *     to whatever a peer's channel waits for of its own; rounded up to whole milliseconds
   */
  public static PeerGroup open(long delayMicros) {
    if (delayMicros < 0) {
      throw new IllegalArgumentException("delayMicros must be >= 0, got " + delayMicros);
    }
    PeerGroup group = new PeerGroup((delayMicros + 999) / 1000);
    OPEN.set(group);
    return group;
  }

  /** The group open on this thread, or a new group of one. */
  static PeerGroup joined() {
    PeerGroup open = OPEN.get();
    return open != null ? open : new PeerGroup(0);
  }

  /** The network delay between two routers, ms. */
  long delayMillis() {
    return delayMillis;
  }

  /** The group's channel named {@code name}, made by {@code make} for the first to ask. */
  @SuppressWarnings("unchecked")
  <T> T channel(String name, Supplier<T> make) {
    return (T) channels.computeIfAbsent(name, n -> make.get());
  }

  @Override
  public void close() {
    if (OPEN.get() == this) {
      OPEN.remove();
    }
  }
}

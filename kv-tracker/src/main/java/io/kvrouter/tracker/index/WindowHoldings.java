package io.kvrouter.tracker.index;

import io.kvrouter.protocol.WindowBlocks;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;

/**
 * Per replica of a hybrid model, the router keys its sliding-window cache group holds and its
 * window, so a full-attention match can be credited only where the window is still held ({@link
 * SlidingWindowHit}).
 *
 * <p>Contract: {@link #apply} adds or drops keys as the replica's {@link WindowBlocks} say; {@link
 * #credited} is the reusable part of a full-attention match of {@code matched} prompt blocks and
 * equals {@code matched} for a replica that never reported a window group (a model with one
 * full-attention group); {@link #clear} forgets a replica. At most {@code maxKeysPerReplica} keys
 * are kept per replica, the oldest dropped first: a dropped key can only make the credit smaller,
 * never claim a block the engine does not hold.
 *
 * <p>Cost: O(1) per key applied; {@link #credited} O(matched) at worst. About 80 bytes per held
 * key. Not thread-safe: the tracker's actor owns it.
 *
 * <p>Implementation notes: one insertion-ordered set of boxed keys per replica, in a map by replica
 * index; simple rather than compact, as a window group holds few blocks per request.
 */
public final class WindowHoldings {

  private static final class Replica {
    int windowTokens;
    final LinkedHashSet<Long> keys = new LinkedHashSet<>();
  }

  private final int maxKeysPerReplica;
  private final Map<Integer, Replica> replicas = new HashMap<>();

  /**
   * @param maxKeysPerReplica keys kept per replica at most
   */
  public WindowHoldings(int maxKeysPerReplica) {
    if (maxKeysPerReplica < 1) {
      throw new IllegalArgumentException("maxKeysPerReplica must be positive");
    }
    this.maxKeysPerReplica = maxKeysPerReplica;
  }

  /** The replica's window group stored or dropped the event's keys. */
  public void apply(int replica, WindowBlocks event) {
    Replica r = replicas.computeIfAbsent(replica, k -> new Replica());
    r.windowTokens = event.windowTokens();
    if (event.stored()) {
      for (long key : event.blockKeys()) {
        r.keys.add(key);
      }
      var it = r.keys.iterator();
      while (r.keys.size() > maxKeysPerReplica) {
        it.next();
        it.remove();
      }
    } else {
      for (long key : event.blockKeys()) {
        r.keys.remove(key);
      }
    }
  }

  /** The window in tokens of the replica's sliding-window group, 0 when it reported none. */
  public int windowTokens(int replica) {
    Replica r = replicas.get(replica);
    return r == null ? 0 : r.windowTokens;
  }

  /**
   * The leading blocks of a full-attention match of {@code matched} blocks of {@code promptKeys}
   * the replica can reuse.
   */
  public int credited(int replica, long[] promptKeys, int matched, int blockSize) {
    Replica r = replicas.get(replica);
    if (r == null) {
      return matched;
    }
    int contiguous = SlidingWindowHit.contiguousBlocks(r.windowTokens, blockSize);
    return SlidingWindowHit.creditedBlocks(
        matched, contiguous, i -> r.keys.contains(promptKeys[i]));
  }

  /** True when no replica reported a window group. */
  public boolean isEmpty() {
    return replicas.isEmpty();
  }

  /** Forgets the replica (cleared, dropped, or about to be rebuilt from a snapshot). */
  public void clear(int replica) {
    replicas.remove(replica);
  }
}

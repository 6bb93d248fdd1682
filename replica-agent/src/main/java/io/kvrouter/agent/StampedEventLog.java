package io.kvrouter.agent;

import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Stamps one replica's event batches with {@code (replicaId, epoch, seq)} and keeps the last {@code
 * capacity} of them for replay.
 *
 * <p>Contract: seq runs 0, 1, 2, ... without gaps within an epoch; {@link #newEpoch} starts over at
 * 0 and forgets the ring; {@link #replay} answers only for the current epoch and only when every
 * batch from {@code fromSeq} on is still held (otherwise the caller sends a snapshot).
 *
 * <p>Cost: O(1) per append, O(returned) per replay; one reference per held batch. Not thread-safe
 * (its owner serialises access).
 *
 * <p>Implementation notes: an {@link ArrayDeque} ring; the seq of its first element is {@code
 * nextSeq − size}, so lookups index arithmetically.
 */
public final class StampedEventLog {

  private final String replicaId;
  private final int capacity;
  private final ArrayDeque<KvEventBatch> ring = new ArrayDeque<>();
  private long epoch;
  private long nextSeq;

  public StampedEventLog(String replicaId, long epoch, int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be positive, was " + capacity);
    }
    this.replicaId = replicaId;
    this.epoch = epoch;
    this.capacity = capacity;
  }

  /** Stamps and keeps a batch of events (not copied; the caller hands them over). */
  public KvEventBatch append(KvEvent[] events) {
    KvEventBatch b =
        new KvEventBatch(replicaId, epoch, nextSeq++, events, System.currentTimeMillis());
    ring.addLast(b);
    if (ring.size() > capacity) {
      ring.removeFirst();
    }
    return b;
  }

  /** Starts a new epoch at seq 0 and forgets the ring. */
  public void newEpoch(long newEpoch) {
    if (newEpoch <= epoch) {
      throw new IllegalArgumentException("epoch must grow: " + newEpoch + " after " + epoch);
    }
    epoch = newEpoch;
    nextSeq = 0;
    ring.clear();
  }

  /**
   * Batches of {@code epoch} from {@code fromSeq} up to the latest.
   *
   * @return empty when the epoch is not the current one or {@code fromSeq} is older than the ring
   *     (send a snapshot instead); an empty list when the caller is up to date
   */
  public Optional<List<KvEventBatch>> replay(long forEpoch, long fromSeq) {
    long first = nextSeq - ring.size();
    if (forEpoch != epoch || fromSeq < first || fromSeq > nextSeq) {
      return Optional.empty();
    }
    List<KvEventBatch> out = new ArrayList<>((int) (nextSeq - fromSeq));
    long s = first;
    for (KvEventBatch b : ring) {
      if (s++ >= fromSeq) {
        out.add(b);
      }
    }
    return Optional.of(out);
  }

  public String replicaId() {
    return replicaId;
  }

  public long epoch() {
    return epoch;
  }

  /** The seq the next batch will get; the last stamped one is {@code nextSeq() − 1}. */
  public long nextSeq() {
    return nextSeq;
  }
}

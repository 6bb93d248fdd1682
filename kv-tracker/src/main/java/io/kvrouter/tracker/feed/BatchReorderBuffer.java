package io.kvrouter.tracker.feed;

import io.kvrouter.protocol.KvEventBatch;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Holds a few KV event batches that arrived ahead of their turn (a reordered delivery), per replica
 * and for one epoch at a time, so they can be applied as soon as the missing ones come instead of
 * being fetched again by a replay.
 *
 * <p>Cost: O(log b) per held or taken batch, b ≤ {@code maxPerReplica}; when full, further early
 * batches are not held (the replay brings them). Not thread-safe.
 */
public final class BatchReorderBuffer {

  private final int maxPerReplica;
  private final Map<String, Held> held = new HashMap<>();

  private static final class Held {
    long epoch;
    final TreeMap<Long, KvEventBatch> bySeq = new TreeMap<>();
  }

  public BatchReorderBuffer(int maxPerReplica) {
    this.maxPerReplica = maxPerReplica;
  }

  /** Keeps an early batch; batches of an older epoch than those held are ignored. */
  public void hold(KvEventBatch batch) {
    Held h = held.computeIfAbsent(batch.replicaId(), r -> new Held());
    if (h.bySeq.isEmpty() || batch.epoch() > h.epoch) {
      h.bySeq.clear();
      h.epoch = batch.epoch();
    }
    if (batch.epoch() == h.epoch && h.bySeq.size() < maxPerReplica) {
      h.bySeq.put(batch.seq(), batch);
    }
  }

  /** The held batch {@code (epoch, seq)} of the replica, removed, or null. */
  public KvEventBatch take(String replicaId, long epoch, long seq) {
    Held h = held.get(replicaId);
    if (h == null || h.epoch != epoch) {
      return null;
    }
    h.bySeq.headMap(seq).clear();
    KvEventBatch b = h.bySeq.remove(seq);
    if (h.bySeq.isEmpty()) {
      held.remove(replicaId);
    }
    return b;
  }

  /** Forgets everything held for the replica. */
  public void clear(String replicaId) {
    held.remove(replicaId);
  }
}

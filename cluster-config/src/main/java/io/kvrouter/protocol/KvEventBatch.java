package io.kvrouter.protocol;

import java.util.Arrays;
import java.util.Objects;

/**
 * A stamped batch of KV events of one replica, as the replica agent publishes it on the event
 * plane. Trackers apply batches of a replica in {@code seq} order within one {@code epoch}; a new
 * epoch (engine or agent restart) clears the replica first. Applying a batch twice is harmless.
 *
 * <p>The events array is never mutated after the record is built.
 *
 * @param replicaId the routable target (see {@link ReplicaInfo#targetId()})
 * @param epoch changes whenever the agent or its engine restarts
 * @param seq 0, 1, 2, ... within an epoch, without gaps
 * @param events the events, in engine order
 * @param publishedMillis when the agent published it (agent wall clock; 0 when unknown), for the
 *     event-lag metric
 */
public record KvEventBatch(
    String replicaId, long epoch, long seq, KvEvent[] events, long publishedMillis)
    implements KryoWire {

  public KvEventBatch {
    Objects.requireNonNull(replicaId, "replicaId");
    Objects.requireNonNull(events, "events");
  }

  /** A batch without a publication time. */
  public KvEventBatch(String replicaId, long epoch, long seq, KvEvent[] events) {
    this(replicaId, epoch, seq, events, 0L);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof KvEventBatch b
        && epoch == b.epoch
        && seq == b.seq
        && replicaId.equals(b.replicaId)
        && Arrays.equals(events, b.events);
  }

  @Override
  public int hashCode() {
    return Objects.hash(replicaId, epoch, seq, Arrays.hashCode(events));
  }

  @Override
  public String toString() {
    return "KvEventBatch["
        + replicaId
        + ", epoch="
        + epoch
        + ", seq="
        + seq
        + ", events="
        + events.length
        + "]";
  }
}

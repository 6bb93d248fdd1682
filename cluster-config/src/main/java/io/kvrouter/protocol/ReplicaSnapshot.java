package io.kvrouter.protocol;

/**
 * The full state of one replica as its agent knows it, answering a replay request the ring buffer
 * can no longer serve. Applying {@code events} (a {@code ReplicaCleared} first) gives the state
 * after batch {@code (epoch, lastSeq)}; the tracker continues with {@code lastSeq + 1}. The array
 * is never mutated after the record is built.
 *
 * @param replicaId the replica
 * @param epoch the current epoch
 * @param lastSeq the last stamped seq the snapshot includes (−1 when none yet)
 * @param events ReplicaCleared, then one BlocksStored per held block, parents first
 */
public record ReplicaSnapshot(String replicaId, long epoch, long lastSeq, KvEvent[] events)
    implements KryoWire {

  @Override
  public boolean equals(Object o) {
    return o instanceof ReplicaSnapshot s
        && epoch == s.epoch
        && lastSeq == s.lastSeq
        && replicaId.equals(s.replicaId)
        && java.util.Arrays.equals(events, s.events);
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(replicaId, epoch, lastSeq, java.util.Arrays.hashCode(events));
  }

  @Override
  public String toString() {
    return "ReplicaSnapshot["
        + replicaId
        + ", epoch="
        + epoch
        + ", lastSeq="
        + lastSeq
        + ", events="
        + events.length
        + "]";
  }
}

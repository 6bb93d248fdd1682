package io.kvrouter.protocol;

/** The replica's whole state; apply its events and continue from {@code lastSeq + 1}. */
public record SnapshotReply(ReplicaSnapshot snapshot) implements ReplayReply {

  @Override
  public String replicaId() {
    return snapshot.replicaId();
  }
}

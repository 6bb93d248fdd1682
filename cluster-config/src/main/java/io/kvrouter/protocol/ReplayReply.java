package io.kvrouter.protocol;

/** The answers to {@link RequestReplay}. */
public sealed interface ReplayReply extends KryoWire permits Replayed, SnapshotReply {

  /** The replica the reply is about. */
  String replicaId();
}

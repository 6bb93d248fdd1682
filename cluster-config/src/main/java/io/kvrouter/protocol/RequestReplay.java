package io.kvrouter.protocol;

import org.apache.pekko.actor.typed.ActorRef;

/**
 * A tracker missed batches of {@code (replicaId, epoch)} from {@code fromSeq}: the agent replies
 * {@link Replayed} from its ring buffer or, if the ring no longer holds them or the epoch is over,
 * {@link SnapshotReply}. A tracker that knows no epoch yet asks with {@code Long.MIN_VALUE} and
 * gets a snapshot.
 */
public record RequestReplay(
    String replicaId, long epoch, long fromSeq, ActorRef<ReplayReply> replyTo)
    implements AgentRequest, KryoWire {}

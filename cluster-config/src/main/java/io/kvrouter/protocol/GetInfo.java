package io.kvrouter.protocol;

import org.apache.pekko.actor.typed.ActorRef;

/** Asks a replica agent what it serves; the reply is its {@link ReplicaInfo}. */
public record GetInfo(ActorRef<ReplicaInfo> replyTo) implements AgentRequest, KryoWire {}

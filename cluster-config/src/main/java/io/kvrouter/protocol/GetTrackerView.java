package io.kvrouter.protocol;

import org.apache.pekko.actor.typed.ActorRef;

/** Asks a tracker for its watermarks and digests. */
public record GetTrackerView(ActorRef<TrackerView> replyTo) implements TrackerRequest, KryoWire {}

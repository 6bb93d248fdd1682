package io.kvrouter.protocol;

import org.apache.pekko.actor.typed.ActorRef;

/**
 * Asks a tracker's ingress for its {@link TrackerReport}: its view with trims and accuracy. {@link
 * GetTrackerView} stays answered for nodes of earlier versions.
 */
public record GetTrackerReport(ActorRef<TrackerReport> replyTo)
    implements TrackerRequest, KryoWire {}

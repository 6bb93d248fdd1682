package io.kvrouter.protocol;

import org.apache.pekko.actor.typed.ActorRef;

/**
 * A peer missed reservation events of this tracker from {@code fromSeq}: the origin answers from
 * its log, or with a snapshot of its open reservations when the log no longer reaches back.
 */
public record ReplayReservations(String origin, long fromSeq, ActorRef<ReservationReplay> replyTo)
    implements TrackerRequest, KryoWire {}

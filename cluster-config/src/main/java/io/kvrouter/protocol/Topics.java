package io.kvrouter.protocol;

import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.pubsub.Topic;

/**
 * The cluster topics of the event and reservation planes: each name with the one message type it
 * carries. A publisher and a subscriber meet only when they spawn the same name with the same type,
 * so both sides take them from here (a name defined twice could be renamed on one side and cut the
 * plane silently).
 */
public final class Topics {

  /** Stamped {@link KvEventBatch}es, published by agents, read by every ingress's tracker. */
  public static final String KV_EVENTS = "kvrouter-kv-events";

  /** {@link ReplicaLoad} heartbeats, published by agents, read by every ingress's tracker. */
  public static final String REPLICA_LOAD = "kvrouter-replica-load";

  /**
   * {@link ReplicaInfo} re-announcements, published by agents while their replica is registered
   * (what it serves changes at run time: LoRA adapters are loaded and unloaded), read by every
   * ingress, which takes one only for a replica it already knows.
   */
  public static final String REPLICA_INFO = "kvrouter-replica-info";

  /**
   * {@link ReservationEvent}s in their full form, published by ingresses whose reservation wire is
   * {@code legacy} (and by 0.1.0), read by every ingress's tracker.
   */
  public static final String RESERVATIONS = "kvrouter-reservations";

  /**
   * {@link CompactReservationEvent}s, published by ingresses whose reservation wire is {@code
   * compact}, read by every ingress's tracker since 0.2.0. A topic of its own, so a node of an
   * earlier version, which could not read them, never receives them: it finds the events it misses
   * through the origin's marks and gets them by replay, in the full form.
   */
  public static final String RESERVATIONS_COMPACT = "kvrouter-reservations-compact";

  /** Trackers' {@link ReservationMark} heartbeats (their next reservation seq). */
  public static final String RESERVATION_MARKS = "kvrouter-reservation-marks";

  /**
   * {@link IntentMessage}s: routers' intents and shared timing models, unsequenced, published and
   * read by ingresses whose policy reads intents.
   */
  public static final String INTENTS = "kvrouter-intents";

  private Topics() {}

  /** The topic actor of {@link #KV_EVENTS}, to spawn once per node that uses it. */
  public static Behavior<Topic.Command<KvEventBatch>> kvEvents() {
    return Topic.create(KvEventBatch.class, KV_EVENTS);
  }

  /** The topic actor of {@link #REPLICA_LOAD}. */
  public static Behavior<Topic.Command<ReplicaLoad>> replicaLoad() {
    return Topic.create(ReplicaLoad.class, REPLICA_LOAD);
  }

  /** The topic actor of {@link #REPLICA_INFO}. */
  public static Behavior<Topic.Command<ReplicaInfo>> replicaInfo() {
    return Topic.create(ReplicaInfo.class, REPLICA_INFO);
  }

  /** The topic actor of {@link #RESERVATIONS}. */
  public static Behavior<Topic.Command<ReservationEvent>> reservations() {
    return Topic.create(ReservationEvent.class, RESERVATIONS);
  }

  /** The topic actor of {@link #RESERVATIONS_COMPACT}. */
  public static Behavior<Topic.Command<CompactReservationEvent>> compactReservations() {
    return Topic.create(CompactReservationEvent.class, RESERVATIONS_COMPACT);
  }

  /** The topic actor of {@link #RESERVATION_MARKS}. */
  public static Behavior<Topic.Command<ReservationMark>> reservationMarks() {
    return Topic.create(ReservationMark.class, RESERVATION_MARKS);
  }

  /** The topic actor of {@link #INTENTS}. */
  public static Behavior<Topic.Command<IntentMessage>> intents() {
    return Topic.create(IntentMessage.class, INTENTS);
  }
}

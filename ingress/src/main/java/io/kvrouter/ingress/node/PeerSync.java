package io.kvrouter.ingress.node;

import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.protocol.CompactReservationEvent;
import io.kvrouter.protocol.GetTrackerReport;
import io.kvrouter.protocol.GetTrackerView;
import io.kvrouter.protocol.IntentMessage;
import io.kvrouter.protocol.Released;
import io.kvrouter.protocol.ReplayReservations;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.ReservationMark;
import io.kvrouter.protocol.ReservationReplay;
import io.kvrouter.protocol.Reserved;
import io.kvrouter.protocol.RouteIntent;
import io.kvrouter.protocol.SharedTiming;
import io.kvrouter.protocol.Topics;
import io.kvrouter.protocol.TrackerReport;
import io.kvrouter.protocol.TrackerRequest;
import io.kvrouter.protocol.TrackerView;
import io.kvrouter.tracker.actor.KvTracker;
import io.kvrouter.tracker.sync.ReservationCodec;
import io.kvrouter.tracker.sync.ReservationGap;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * The reservation plane of one ingress, and its tracker's endpoint for peers: broadcasts the
 * tracker's reservation events and, every {@code reservation-mark-interval}, its next seq; feeds
 * peers' events and marks to the tracker; when the tracker finds a gap in a peer's events, asks
 * that peer to replay (its log, or a snapshot of its open reservations); answers peers' replay and
 * view requests by handing them to the tracker (a view goes out with this ingress's index accuracy
 * beside it). Reports this side's readiness ({@link IngressReadiness.Component#PEERS}: every listed
 * peer heard from, no replay pending) and follows the node's, which it puts in its tracker's view.
 * Registered under {@link TrackerRequest#SERVICE_KEY}.
 *
 * <p>Own events go out in the compact form ({@link ReservationCodec}) on their own topic, or in the
 * full form when the node's reservation wire is {@code legacy}; peers' events are read in both. A
 * compact event names its origin by member uid, resolved here against the cluster membership; one
 * whose member this node does not see (yet, or any more: an old incarnation) is dropped, and the
 * origin's next mark shows the gap, which its replay fills.
 *
 * <p>Intents and shared timing models ({@link IntentMessage}, when the policy reads intents) go out
 * stamped with this member's uid on their own topic, unsequenced; a peer's reach the tracker named
 * by the peer's address, and one lost is not asked for again.
 */
public final class PeerSync extends AbstractBehavior<TrackerRequest> {

  /** The sync's own messages; they never cross the wire. */
  private interface Internal extends TrackerRequest {}

  /** The tracker made an event: broadcast it. */
  public record Outgoing(ReservationEvent event) implements Internal {}

  /** The tracker made an intent or a timing model to share: broadcast it, stamped. */
  public record OutgoingIntent(IntentMessage message) implements Internal {}

  /** The tracker found a gap in a peer's events. */
  public record Gap(ReservationGap gap) implements Internal {}

  private record EventArrived(ReservationEvent event) implements Internal {}

  private record CompactArrived(CompactReservationEvent event) implements Internal {}

  private record IntentArrived(IntentMessage message) implements Internal {}

  private record MarkArrived(ReservationMark mark) implements Internal {}

  private record OwnMark(ReservationMark mark) implements Internal {}

  private record ListingChanged(Receptionist.Listing listing) implements Internal {}

  private record ReplayArrived(ReservationReplay replay) implements Internal {}

  private record ReplayFailed(String origin) implements Internal {}

  private record ReadinessChanged(IngressReadiness.Status status) implements Internal {}

  /**
   * The tracker's report for a peer's {@link GetTrackerReport}, to complete with this accuracy, or
   * for a {@link GetTrackerView} of an earlier version's node ({@code viewTo}), its view alone.
   */
  private record ViewArrived(
      TrackerReport report, ActorRef<TrackerReport> replyTo, ActorRef<TrackerView> viewTo)
      implements Internal {}

  /** Replies with every tracker endpoint listed now (this one's included), by ingress id. */
  public record GetPeers(ActorRef<Peers> replyTo) implements Internal {}

  /** The tracker endpoints listed now, by ingress id. */
  public record Peers(Map<String, ActorRef<TrackerRequest>> byIngress) {}

  private enum Tick implements Internal {
    INSTANCE
  }

  /** An ask that came back empty: nothing to do. */
  private enum Nothing implements Internal {
    INSTANCE
  }

  private final ActorRef<KvTracker.Command> tracker;
  private final String selfIngressId;
  private final IngressMetrics metrics;
  private final ActorRef<IngressReadiness.Command> readiness;
  private final Duration askTimeout;
  private final ActorRef<Topic.Command<ReservationEvent>> events;
  private final ActorRef<Topic.Command<CompactReservationEvent>> compactEvents;

  /** Encodes own events for the compact topic; null when the full form goes out. */
  private final ReservationCodec codec;

  private final Cluster cluster;
  private final long selfUid;
  private final ActorRef<Topic.Command<ReservationMark>> marks;
  private final ActorRef<Topic.Command<IntentMessage>> intents;
  private final FaultInjector<ReservationEvent> faults;

  /** Run after a peer's release reached the tracker: the router queue may go on. */
  private final Runnable peerReleased;

  private final Set<String> replaying = new HashSet<>();
  private final Set<String> marksSeen = new HashSet<>();
  private Map<String, ActorRef<TrackerRequest>> peers = Map.of();
  private Boolean reportedReady;

  /** True once every peer listed at the time had been heard from (this node has joined). */
  private boolean joined;

  private boolean nodeReady;

  /**
   * @param readiness told whether this side is ready, and followed for the node's readiness
   * @param settings the cluster ask timeout and the mark interval
   * @param compactWire true: own events go out in the compact form; false: in the full form
   * @param peerReleased run (on this actor's thread: it must not block) after a peer's release has
   *     been handed to the tracker, so a router request asked after it sees the slot free
   */
  public static Behavior<TrackerRequest> create(
      ActorRef<KvTracker.Command> tracker,
      String selfIngressId,
      IngressMetrics metrics,
      ActorRef<IngressReadiness.Command> readiness,
      IngressNodeSettings settings,
      boolean compactWire,
      FaultInjector<ReservationEvent> faults,
      Runnable peerReleased) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers ->
                    new PeerSync(
                        ctx,
                        timers,
                        tracker,
                        selfIngressId,
                        metrics,
                        readiness,
                        settings,
                        compactWire,
                        faults,
                        peerReleased)));
  }

  private PeerSync(
      ActorContext<TrackerRequest> ctx,
      TimerScheduler<TrackerRequest> timers,
      ActorRef<KvTracker.Command> tracker,
      String selfIngressId,
      IngressMetrics metrics,
      ActorRef<IngressReadiness.Command> readiness,
      IngressNodeSettings settings,
      boolean compactWire,
      FaultInjector<ReservationEvent> faults,
      Runnable peerReleased) {
    super(ctx);
    this.peerReleased = peerReleased;
    this.tracker = tracker;
    this.selfIngressId = selfIngressId;
    this.metrics = metrics;
    this.readiness = readiness;
    this.askTimeout = settings.clusterAskTimeout();
    this.faults = faults;
    this.events = ctx.spawn(Topics.reservations(), "reservations-topic");
    this.compactEvents = ctx.spawn(Topics.compactReservations(), "compact-reservations-topic");
    this.cluster = Cluster.get(ctx.getSystem());
    this.selfUid = cluster.selfMember().uniqueAddress().longUid();
    this.codec = compactWire ? new ReservationCodec(selfUid) : null;
    this.marks = ctx.spawn(Topics.reservationMarks(), "marks-topic");
    events.tell(Topic.subscribe(ctx.messageAdapter(ReservationEvent.class, EventArrived::new)));
    compactEvents.tell(
        Topic.subscribe(ctx.messageAdapter(CompactReservationEvent.class, CompactArrived::new)));
    marks.tell(Topic.subscribe(ctx.messageAdapter(ReservationMark.class, MarkArrived::new)));
    this.intents = ctx.spawn(Topics.intents(), "intents-topic");
    intents.tell(Topic.subscribe(ctx.messageAdapter(IntentMessage.class, IntentArrived::new)));
    ctx.getSystem()
        .receptionist()
        .tell(Receptionist.register(TrackerRequest.SERVICE_KEY, ctx.getSelf()));
    ctx.getSystem()
        .receptionist()
        .tell(
            Receptionist.subscribe(
                TrackerRequest.SERVICE_KEY,
                ctx.messageAdapter(Receptionist.Listing.class, ListingChanged::new)));
    readiness.tell(
        new IngressReadiness.Subscribe(
            ctx.messageAdapter(IngressReadiness.Status.class, ReadinessChanged::new)));
    timers.startTimerWithFixedDelay(Tick.INSTANCE, settings.reservationMarkInterval());
  }

  @Override
  public Receive<TrackerRequest> createReceive() {
    return newReceiveBuilder()
        .onMessage(GetTrackerView.class, m -> askView(null, m.replyTo()))
        .onMessage(GetTrackerReport.class, m -> askView(m.replyTo(), null))
        .onMessage(ViewArrived.class, this::onViewArrived)
        .onMessage(ReplayReservations.class, this::onReplayReservations)
        .onMessage(Outgoing.class, this::onOutgoing)
        .onMessage(EventArrived.class, this::onEvent)
        .onMessage(CompactArrived.class, this::onCompact)
        .onMessage(OutgoingIntent.class, this::onOutgoingIntent)
        .onMessage(IntentArrived.class, this::onIntent)
        .onMessage(MarkArrived.class, this::onMark)
        .onMessage(OwnMark.class, this::onOwnMark)
        .onMessage(Gap.class, this::onGap)
        .onMessage(ReplayArrived.class, this::onReplay)
        .onMessage(ReplayFailed.class, this::onReplayFailed)
        .onMessage(ListingChanged.class, this::onListing)
        .onMessage(GetPeers.class, this::onGetPeers)
        .onMessage(ReadinessChanged.class, this::onReadinessChanged)
        .onMessageEquals(Tick.INSTANCE, this::onTick)
        .onMessageEquals(Nothing.INSTANCE, () -> this)
        .build();
  }

  private Behavior<TrackerRequest> askView(
      ActorRef<TrackerReport> replyTo, ActorRef<TrackerView> viewTo) {
    getContext()
        .ask(
            TrackerReport.class,
            tracker,
            askTimeout,
            ref -> new KvTracker.GetView(nodeReady, ref),
            (report, error) ->
                report == null ? Nothing.INSTANCE : new ViewArrived(report, replyTo, viewTo));
    return this;
  }

  /** The tracker's report goes out with this ingress's index accuracy beside it. */
  private Behavior<TrackerRequest> onViewArrived(ViewArrived m) {
    if (m.viewTo() != null) {
      m.viewTo().tell(m.report().view());
    } else {
      m.replyTo().tell(m.report().withAccuracy(metrics.accuracy()));
    }
    return this;
  }

  private Behavior<TrackerRequest> onReplayReservations(ReplayReservations m) {
    tracker.tell(new KvTracker.ReplayOwn(m.fromSeq(), m.replyTo()));
    return this;
  }

  private Behavior<TrackerRequest> onOutgoing(Outgoing m) {
    if (codec != null) {
      compactEvents.tell(Topic.publish(codec.encode(m.event())));
    } else {
      events.tell(Topic.publish(m.event()));
    }
    return this;
  }

  private Behavior<TrackerRequest> onCompact(CompactArrived m) {
    String origin = memberAddress(m.event().origin());
    if (origin != null) {
      onEvent(new EventArrived(ReservationCodec.decode(m.event(), origin)));
    }
    // else the topic's echo of an own event, or not a member this node sees (the origin's mark
    // shows the gap)
    return this;
  }

  /** The address of the member other than this node with cluster uid {@code uid}, or null. */
  private String memberAddress(long uid) {
    if (uid == selfUid) {
      return null;
    }
    for (Member member : cluster.state().getMembers()) {
      if (member.uniqueAddress().longUid() == uid) {
        return member.address().toString();
      }
    }
    return null;
  }

  private Behavior<TrackerRequest> onOutgoingIntent(OutgoingIntent m) {
    intents.tell(Topic.publish(m.message().from(selfUid)));
    return this;
  }

  /** A peer's intent or timing model: to the tracker; a lost one is not asked for again. */
  private Behavior<TrackerRequest> onIntent(IntentArrived m) {
    String origin = memberAddress(m.message().origin());
    if (origin == null) {
      return this;
    }
    if (m.message() instanceof RouteIntent intent) {
      metrics.tracker().peerIntent(false);
      tracker.tell(new KvTracker.PeerIntent(origin, intent));
    } else if (m.message() instanceof SharedTiming timing) {
      metrics.tracker().peerIntent(true);
      tracker.tell(new KvTracker.PeerTiming(origin, timing));
    }
    return this;
  }

  private Behavior<TrackerRequest> onOwnMark(OwnMark m) {
    marks.tell(Topic.publish(m.mark()));
    return this;
  }

  private Behavior<TrackerRequest> onReplayFailed(ReplayFailed m) {
    replaying.remove(m.origin());
    return this;
  }

  private Behavior<TrackerRequest> onGetPeers(GetPeers m) {
    m.replyTo().tell(new Peers(peers));
    return this;
  }

  private Behavior<TrackerRequest> onReadinessChanged(ReadinessChanged m) {
    nodeReady = m.status().ready();
    return this;
  }

  private Behavior<TrackerRequest> onEvent(EventArrived m) {
    if (m.event().ingressId().equals(selfIngressId)) {
      return this;
    }
    for (ReservationEvent e : faults.pass(m.event())) {
      if (e instanceof Reserved r && r.issuedMillis() > 0) {
        metrics.tracker().reservationPropagation(System.currentTimeMillis() - r.issuedMillis());
      }
      tracker.tell(new KvTracker.ApplyReservation(e));
      if (e instanceof Released) {
        // After the tell: a router request the wake-up sends reaches the tracker behind it.
        peerReleased.run();
      }
    }
    return this;
  }

  private Behavior<TrackerRequest> onMark(MarkArrived m) {
    if (!m.mark().ingressId().equals(selfIngressId)) {
      marksSeen.add(m.mark().ingressId());
      tracker.tell(new KvTracker.PeerMark(m.mark()));
    }
    return this;
  }

  private Behavior<TrackerRequest> onGap(Gap m) {
    String origin = m.gap().origin();
    metrics.tracker().gap("reservations");
    ActorRef<TrackerRequest> peer = peers.get(origin);
    if (peer == null || !replaying.add(origin)) {
      return this; // not listed yet, or a replay is already under way
    }
    metrics.tracker().replay("reservations");
    getContext()
        .ask(
            ReservationReplay.class,
            peer,
            askTimeout,
            replyTo -> new ReplayReservations(origin, m.gap().fromSeq(), replyTo),
            (replay, error) ->
                replay == null ? new ReplayFailed(origin) : new ReplayArrived(replay));
    return this;
  }

  private Behavior<TrackerRequest> onReplay(ReplayArrived m) {
    replaying.remove(m.replay().origin());
    if (m.replay().snapshot()) {
      metrics.tracker().snapshot("reservations");
    }
    tracker.tell(new KvTracker.ApplyPeerReplay(m.replay()));
    return this;
  }

  private Behavior<TrackerRequest> onListing(ListingChanged m) {
    Map<String, ActorRef<TrackerRequest>> now = new HashMap<>();
    for (ActorRef<TrackerRequest> ref :
        m.listing().getServiceInstances(TrackerRequest.SERVICE_KEY)) {
      var address = ref.path().address();
      now.put(address.hasGlobalScope() ? address.toString() : selfIngressId, ref);
    }
    peers = Map.copyOf(now);
    marksSeen.retainAll(now.keySet());
    replaying.retainAll(now.keySet());
    return this;
  }

  private Behavior<TrackerRequest> onTick() {
    getContext()
        .ask(
            ReservationMark.class,
            tracker,
            askTimeout,
            KvTracker.GetOwnMark::new,
            (mark, error) -> mark == null ? Nothing.INSTANCE : new OwnMark(mark));
    Set<String> others = new HashSet<>(peers.keySet());
    others.remove(selfIngressId);
    // Hearing from every listed peer is a condition of joining (this tracker must know the others'
    // open reservations before it routes), not of staying: a peer that joins later starts its
    // reservation stream empty, and an ingress that went unready until it heard from it would
    // turn a rolling restart's second step into a moment when no ingress is ready.
    joined = joined || marksSeen.containsAll(others);
    boolean ready = replaying.isEmpty() && joined;
    if (!Boolean.valueOf(ready).equals(reportedReady)) {
      reportedReady = ready;
      readiness.tell(new IngressReadiness.Report(IngressReadiness.Component.PEERS, ready));
    }
    return this;
  }
}

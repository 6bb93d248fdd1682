package io.kvrouter.tracker.actor;

import io.kvrouter.config.serialization.WireTraffic;
import io.kvrouter.protocol.IntentMessage;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.PrefillCompleted;
import io.kvrouter.protocol.Released;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.ReplicaSnapshot;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.ReservationMark;
import io.kvrouter.protocol.ReservationReplay;
import io.kvrouter.protocol.Reserved;
import io.kvrouter.protocol.RouteIntent;
import io.kvrouter.protocol.SharedTiming;
import io.kvrouter.protocol.TrackerReport;
import io.kvrouter.protocol.WirePlane;
import io.kvrouter.tracker.Decision;
import io.kvrouter.tracker.KvTrackerCore;
import io.kvrouter.tracker.RouteRequest;
import io.kvrouter.tracker.TrackerConfig;
import io.kvrouter.tracker.TrackerDigests;
import io.kvrouter.tracker.feed.EventSequencer;
import io.kvrouter.tracker.feed.GapDetected;
import io.kvrouter.tracker.sync.ReservationGap;
import io.kvrouter.tracker.sync.ReservationSync;
import java.time.Duration;
import java.util.function.LongSupplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * Owns one {@link KvTrackerCore} per ingress node and serialises access to it: applies KV event
 * batches, answers select-and-reserve, handles request lifecycle and peers' reservation events,
 * expires leases on a timer and reports digests. All logic is in the core; this actor only maps
 * messages to calls and results to replies.
 *
 * <p>Outputs: every reservation event this node originates (Reserved, PrefillCompleted, Released)
 * goes to {@code reservationsOut} to be broadcast, every refused batch with a gap (or a heartbeat
 * showing the tracker behind) to {@code gapsOut} to trigger a replay, and every gap in a peer's
 * reservation events to {@code reservationGapsOut}; when the policy reads intents, an intent for
 * every request it holds, and its timing model every tick, to {@code intentsOut}. The core puts
 * peers' events back in their origin's order.
 *
 * <p>Over 450 lines because its protocol (21 messages) sits at its top; every handler is one short
 * method mapping a message to a call on the core.
 */
public final class KvTracker extends AbstractBehavior<KvTracker.Command> {

  /** Everything the tracker understands. */
  public sealed interface Command
      permits ApplyBatch,
          InstallSnapshot,
          ApplyPeerReplay,
          PeerMark,
          ReplayOwn,
          GetView,
          GetOwnMark,
          DebugDiverge,
          SelectAndReserve,
          Held,
          Announce,
          PrefillDone,
          Release,
          ApplyReservation,
          ReplicaUp,
          ReplicaDown,
          LoadReported,
          IngressLeft,
          PeerIntent,
          PeerTiming,
          GetDigests,
          GetLoads,
          Tick {}

  /** A replica's KV event batch from the event plane. */
  public record ApplyBatch(KvEventBatch batch) implements Command {}

  /** An agent's full snapshot of a replica (gap older than its ring buffer, or a late join). */
  public record InstallSnapshot(ReplicaSnapshot snapshot) implements Command {}

  /** An origin's answer to a reservation replay this tracker asked for. */
  public record ApplyPeerReplay(ReservationReplay replay) implements Command {}

  /** An origin's heartbeat with its next reservation seq. */
  public record PeerMark(ReservationMark mark) implements Command {}

  /** A peer missed this tracker's reservation events from {@code fromSeq}. */
  public record ReplayOwn(long fromSeq, ActorRef<ReservationReplay> replyTo) implements Command {}

  /** Replies with this tracker's next own reservation seq (for its periodic heartbeat). */
  public record GetOwnMark(ActorRef<ReservationMark> replyTo) implements Command {}

  /** Debug only: corrupt this tracker's state of a replica without moving its watermark. */
  public record DebugDiverge(String replicaId) implements Command {}

  /** Replies with this tracker's watermarks and digests. */
  public record GetView(boolean ready, ActorRef<TrackerReport> replyTo) implements Command {}

  /**
   * Place a request: replies with the {@link Decision} (its reservation is already recorded). With
   * {@code announce} false the reservation reaches the peers only on {@link Announce} (strict mode:
   * once its gate admitted it); a {@link Release} before that drops it unseen.
   */
  public record SelectAndReserve(RouteRequest request, ActorRef<Decision> replyTo, boolean announce)
      implements Command {

    /** Announced at once. */
    public SelectAndReserve(RouteRequest request, ActorRef<Decision> replyTo) {
      this(request, replyTo, true);
    }
  }

  /** A broadcast-mode placement whose wait the policy asked for is over: decide it now. */
  record Held(SelectAndReserve placement, long heldMillis) implements Command {}

  /** A reservation held back by {@code SelectAndReserve(..., false)} stands: broadcast it. */
  public record Announce(String requestId) implements Command {}

  /** The first token of an own request arrived. */
  public record PrefillDone(String requestId) implements Command {}

  /** An own request ended (done, error, client gone). */
  public record Release(String requestId) implements Command {}

  /** A peer tracker's reservation event. */
  public record ApplyReservation(ReservationEvent event) implements Command {}

  /** A replica joined. */
  public record ReplicaUp(ReplicaInfo info) implements Command {}

  /** A replica left. */
  public record ReplicaDown(String targetId) implements Command {}

  /** An engine load heartbeat. */
  public record LoadReported(ReplicaLoad load) implements Command {}

  /** A peer ingress left the cluster: drop its reservations. */
  public record IngressLeft(String ingressId) implements Command {}

  /** Peer {@code origin} (its ingress id) will decide the request of {@code intent}. */
  public record PeerIntent(String origin, RouteIntent intent) implements Command {}

  /** Peer {@code origin} (its ingress id) shared its timing model. */
  public record PeerTiming(String origin, SharedTiming timing) implements Command {}

  /** Replies with the current digests. */
  public record GetDigests(ActorRef<TrackerDigests> replyTo) implements Command {}

  /** Replies with every replica's current load. */
  public record GetLoads(ActorRef<Loads> replyTo) implements Command {}

  /**
   * Every replica's load, by target id, the size of the tracker's state, and how late each
   * replica's first tokens have lately come to this router, ms ({@code KvTrackerCore#lags}).
   */
  public record Loads(
      java.util.Map<String, io.kvrouter.tracker.ReplicaLoadSnapshot> byReplica,
      io.kvrouter.tracker.TrackerStats stats,
      java.util.Map<String, Double> lagMillis) {}

  /** Lease and prediction expiry. */
  enum Tick implements Command {
    INSTANCE
  }

  private final KvTrackerCore core;
  // Placements waiting for their hold to end, by request id. A Release meanwhile (the asker gave
  // up) drops one before it reserves anything.
  private final java.util.Map<String, SelectAndReserve> holding = new java.util.HashMap<>();
  private final LongSupplier clock;
  private final ActorRef<ReservationEvent> reservationsOut;
  private final ActorRef<GapDetected> gapsOut;
  private final ActorRef<ReservationGap> reservationGapsOut;
  private final ActorRef<IntentMessage> intentsOut;
  // Holds end on the JDK timer, to the millisecond ({@link HoldTimer}); otherwise on the actor
  // system's scheduler (its tick; a test's manual time).
  private final boolean preciseHolds;

  /** Where the CPU spent applying peers' and agents' messages is counted, by plane. */
  private final WireTraffic traffic;

  private KvTracker(
      ActorContext<Command> context,
      KvTrackerCore core,
      LongSupplier clock,
      ActorRef<ReservationEvent> reservationsOut,
      ActorRef<GapDetected> gapsOut,
      ActorRef<ReservationGap> reservationGapsOut,
      ActorRef<IntentMessage> intentsOut,
      boolean preciseHolds) {
    super(context);
    this.reservationGapsOut = reservationGapsOut;
    this.intentsOut = intentsOut;
    this.preciseHolds = preciseHolds;
    this.core = core;
    this.clock = clock;
    this.reservationsOut = reservationsOut;
    this.gapsOut = gapsOut;
    this.traffic = WireTraffic.get(context.getSystem());
  }

  /**
   * @param clock milliseconds "now" for leases and predicted entries (wall clock in production)
   * @param tickInterval how often leases and predictions are expired
   * @param reservationsOut receives every reservation event this node originates
   * @param gapsOut receives every detected gap
   */
  public static Behavior<Command> create(
      TrackerConfig config,
      LongSupplier clock,
      Duration tickInterval,
      ActorRef<ReservationEvent> reservationsOut,
      ActorRef<GapDetected> gapsOut) {
    return Behaviors.setup(
        context ->
            create(
                config,
                clock,
                tickInterval,
                reservationsOut,
                gapsOut,
                context.getSystem().ignoreRef(),
                context.getSystem().ignoreRef(),
                false));
  }

  /**
   * @param reservationGapsOut receives every detected gap in a peer's reservation events
   * @param intentsOut receives, when the policy reads intents, an intent for every request held
   *     before its decision and, every tick, the timing model to share
   * @param preciseHolds whether a placement's hold ends on a JDK timer to the millisecond ({@link
   *     HoldTimer}, production) rather than on the actor system's scheduler, which rounds it up to
   *     its 10 ms tick (and which a test's manual time drives)
   */
  public static Behavior<Command> create(
      TrackerConfig config,
      LongSupplier clock,
      Duration tickInterval,
      ActorRef<ReservationEvent> reservationsOut,
      ActorRef<GapDetected> gapsOut,
      ActorRef<ReservationGap> reservationGapsOut,
      ActorRef<IntentMessage> intentsOut,
      boolean preciseHolds) {
    return Behaviors.setup(
        context ->
            Behaviors.withTimers(
                timers -> {
                  timers.startTimerWithFixedDelay(Tick.INSTANCE, tickInterval);
                  return new KvTracker(
                      context,
                      new KvTrackerCore(config),
                      clock,
                      reservationsOut,
                      gapsOut,
                      reservationGapsOut,
                      intentsOut,
                      preciseHolds);
                }));
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(ApplyBatch.class, this::onApplyBatch)
        .onMessage(InstallSnapshot.class, this::onInstallSnapshot)
        .onMessage(ApplyPeerReplay.class, this::onApplyPeerReplay)
        .onMessage(PeerMark.class, this::onPeerMark)
        .onMessage(ReplayOwn.class, this::onReplayOwn)
        .onMessage(GetView.class, this::onGetView)
        .onMessage(DebugDiverge.class, this::onDebugDiverge)
        .onMessage(GetOwnMark.class, this::onGetOwnMark)
        .onMessage(SelectAndReserve.class, this::onSelectAndReserve)
        .onMessage(Held.class, this::onHeld)
        .onMessage(PrefillDone.class, this::onPrefillDone)
        .onMessage(Release.class, this::onRelease)
        .onMessage(Announce.class, this::onAnnounce)
        .onMessage(ApplyReservation.class, this::onApplyReservation)
        .onMessage(ReplicaUp.class, this::onReplicaUp)
        .onMessage(ReplicaDown.class, this::onReplicaDown)
        .onMessage(LoadReported.class, this::onLoadReported)
        .onMessage(IngressLeft.class, this::onIngressLeft)
        .onMessage(PeerIntent.class, this::onPeerIntent)
        .onMessage(PeerTiming.class, this::onPeerTiming)
        .onMessage(GetDigests.class, this::onGetDigests)
        .onMessage(GetLoads.class, this::onGetLoads)
        .onMessageEquals(Tick.INSTANCE, this::onTick)
        .build();
  }

  private Behavior<Command> onApplyBatch(ApplyBatch m) {
    long cpu = WireTraffic.threadCpuNanos();
    EventSequencer.Verdict verdict = core.apply(m.batch());
    applied(WirePlane.EVENTS, cpu);
    if (verdict.outcome() == EventSequencer.Outcome.GAP) {
      gapsOut.tell(new GapDetected(m.batch().replicaId(), verdict.epoch(), verdict.expectedSeq()));
    }
    return this;
  }

  private Behavior<Command> onInstallSnapshot(InstallSnapshot m) {
    long cpu = WireTraffic.threadCpuNanos();
    core.installSnapshot(m.snapshot());
    applied(WirePlane.EVENTS, cpu);
    return this;
  }

  private Behavior<Command> onApplyPeerReplay(ApplyPeerReplay m) {
    long cpu = WireTraffic.threadCpuNanos();
    core.applyPeerReplay(m.replay(), clock.getAsLong());
    applied(WirePlane.RESERVATIONS, cpu);
    return this;
  }

  /** Counts the CPU this thread spent since {@code startNanos} applying a {@code plane} message. */
  private void applied(WirePlane plane, long startNanos) {
    traffic.spent(plane, WireTraffic.Work.APPLY, startNanos, WireTraffic.threadCpuNanos());
  }

  private Behavior<Command> onPeerMark(PeerMark m) {
    long from = core.peerBehind(m.mark(), clock.getAsLong());
    if (from != ReservationSync.NO_GAP) {
      reservationGapsOut.tell(new ReservationGap(m.mark().ingressId(), from));
    }
    return this;
  }

  private Behavior<Command> onReplayOwn(ReplayOwn m) {
    m.replyTo().tell(core.ownReplay(m.fromSeq()));
    return this;
  }

  private Behavior<Command> onGetView(GetView m) {
    m.replyTo().tell(core.report(clock.getAsLong(), m.ready()));
    return this;
  }

  private Behavior<Command> onDebugDiverge(DebugDiverge m) {
    getContext().getLog().warn("debug: diverging this tracker's state of {}", m.replicaId());
    core.debugDiverge(m.replicaId());
    return this;
  }

  private Behavior<Command> onGetOwnMark(GetOwnMark m) {
    m.replyTo().tell(core.ownMark());
    return this;
  }

  /**
   * A broadcast-mode placement waits first when the policy asks ({@link KvTrackerCore#holdMillis}:
   * long prompts), a timer away ({@link HoldTimer} in production); meanwhile the tracker goes on
   * with other messages, and the decision is taken on the state the wait brought. When the policy
   * reads intents, the peers hear of the held request at once.
   */
  private Behavior<Command> onSelectAndReserve(SelectAndReserve m) {
    long now = clock.getAsLong();
    long hold = m.announce() ? core.coordination().holdMillis(m.request(), now) : 0;
    if (hold > 0 && holding.putIfAbsent(m.request().requestId(), m) == null) {
      RouteIntent intent =
          core.coordination().readsIntents()
              ? core.coordination().intentOf(m.request(), now + hold, now)
              : null;
      if (intent != null) {
        intentsOut.tell(intent);
      }
      holdFor(m, hold, hold);
      return this;
    }
    return decide(m, 0, now);
  }

  /**
   * Wakes this tracker {@code millis} from now to decide {@code m}, held {@code heldMillis} then.
   */
  private void holdFor(SelectAndReserve m, long millis, long heldMillis) {
    Held held = new Held(m, heldMillis);
    if (preciseHolds) {
      ActorRef<Command> self = getContext().getSelf();
      HoldTimer.after(millis, () -> self.tell(held));
    } else {
      getContext().scheduleOnce(Duration.ofMillis(millis), getContext().getSelf(), held);
    }
  }

  /**
   * A hold ran out: decided now, unless the policy asks to wait longer for what arrived meanwhile
   * ({@link KvTrackerCore#holdMoreMillis}); a request released meanwhile is gone.
   */
  private Behavior<Command> onHeld(Held m) {
    SelectAndReserve placement = m.placement();
    if (holding.get(placement.request().requestId()) != placement) {
      return this;
    }
    long now = clock.getAsLong();
    long more = core.coordination().holdMoreMillis(placement.request(), now, m.heldMillis());
    if (more > 0) {
      holdFor(placement, more, m.heldMillis() + more);
      return this;
    }
    holding.remove(placement.request().requestId());
    return decide(placement, m.heldMillis(), now);
  }

  /**
   * Decides {@code m} at {@code nowMillis}, the clock reading its hold (if any) ended on: the
   * policy may have asked about it at that reading.
   */
  private Behavior<Command> decide(SelectAndReserve m, long heldMillis, long nowMillis) {
    Decision decision =
        m.announce()
            ? core.selectAndReserve(m.request(), nowMillis)
            : core.selectAndReserveUnannounced(m.request(), nowMillis);
    m.replyTo().tell(heldMillis > 0 ? decision.heldFor(heldMillis) : decision);
    if (decision.reserved() != null) {
      reservationsOut.tell(decision.reserved());
    }
    return this;
  }

  private Behavior<Command> onAnnounce(Announce m) {
    Reserved event = core.announce(m.requestId());
    if (event != null) {
      reservationsOut.tell(event);
    }
    return this;
  }

  private Behavior<Command> onPrefillDone(PrefillDone m) {
    PrefillCompleted event = core.prefillCompleted(m.requestId(), clock.getAsLong());
    if (event != null) {
      reservationsOut.tell(event);
    }
    return this;
  }

  private Behavior<Command> onRelease(Release m) {
    if (holding.remove(m.requestId()) != null) {
      return this; // still waiting for its decision: nothing reserved yet
    }
    Released event = core.released(m.requestId(), clock.getAsLong());
    if (event != null) {
      reservationsOut.tell(event);
    }
    return this;
  }

  private Behavior<Command> onApplyReservation(ApplyReservation m) {
    long cpu = WireTraffic.threadCpuNanos();
    long from = core.applyPeer(m.event(), clock.getAsLong());
    applied(WirePlane.RESERVATIONS, cpu);
    if (from != ReservationSync.NO_GAP) {
      reservationGapsOut.tell(new ReservationGap(m.event().ingressId(), from));
    }
    return this;
  }

  private Behavior<Command> onReplicaUp(ReplicaUp m) {
    core.replicaUp(m.info());
    return this;
  }

  private Behavior<Command> onReplicaDown(ReplicaDown m) {
    core.replicaDown(m.targetId());
    return this;
  }

  private Behavior<Command> onLoadReported(LoadReported m) {
    core.loadReported(m.load());
    GapDetected behind = core.behind(m.load().replicaId(), m.load().epoch(), m.load().lastSeq());
    if (behind != null) {
      gapsOut.tell(behind);
    }
    return this;
  }

  private Behavior<Command> onIngressLeft(IngressLeft m) {
    core.dropOrigin(m.ingressId());
    return this;
  }

  private Behavior<Command> onPeerIntent(PeerIntent m) {
    long cpu = WireTraffic.threadCpuNanos();
    core.coordination().peerIntent(m.origin(), m.intent(), clock.getAsLong());
    applied(WirePlane.RESERVATIONS, cpu);
    return this;
  }

  private Behavior<Command> onPeerTiming(PeerTiming m) {
    core.coordination().peerTiming(m.origin(), m.timing(), clock.getAsLong());
    return this;
  }

  private Behavior<Command> onGetDigests(GetDigests m) {
    m.replyTo().tell(core.digests());
    return this;
  }

  private Behavior<Command> onGetLoads(GetLoads m) {
    m.replyTo().tell(new Loads(core.loads(), core.stats(), core.lags(clock.getAsLong())));
    return this;
  }

  private Behavior<Command> onTick() {
    core.expire(clock.getAsLong()).forEach(reservationsOut::tell);
    SharedTiming timing = core.coordination().timingToShare();
    if (timing != null) {
      intentsOut.tell(timing);
    }
    return this;
  }
}

package io.kvrouter.ingress.node;

import io.kvrouter.ingress.routing.ReplicaDirectory;
import io.kvrouter.protocol.AgentRequest;
import io.kvrouter.protocol.GetInfo;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplayReply;
import io.kvrouter.protocol.Replayed;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.RequestReplay;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.SnapshotReply;
import io.kvrouter.tracker.actor.GapDetected;
import io.kvrouter.tracker.actor.KvTracker;
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
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Subscribe;

/**
 * Feeds the node's tracker from the cluster: KV event batches and load heartbeats from the
 * agents' topics, peers' reservation events from the reservation topic, replicas coming and
 * going through the Receptionist, ingress nodes leaving the cluster; and repairs gaps the
 * tracker reports by asking the replica's agent for a replay (or a snapshot).
 *
 * <p>Thin: it only translates and forwards; the rules live in the tracker's plain-Java core.
 */
public final class TrackerFeeds extends AbstractBehavior<TrackerFeeds.Command> {

  /** Topic of stamped KV event batches (published by replica agents). */
  public static final String KV_EVENTS_TOPIC = "kvrouter-kv-events";

  /** Topic of engine load heartbeats (published by replica agents). */
  public static final String REPLICA_LOAD_TOPIC = "kvrouter-replica-load";

  /** Topic of reservation events (published by ingress trackers). */
  public static final String RESERVATIONS_TOPIC = "kvrouter-reservations";

  /** What the feeds receive. */
  public sealed interface Command
      permits BatchArrived, LoadArrived, ReservationArrived, ListingChanged, InfoArrived, MemberLeft,
          Gap, ReplayArrived, ReplayFailed {}

  record BatchArrived(KvEventBatch batch) implements Command {}

  record LoadArrived(ReplicaLoad load) implements Command {}

  record ReservationArrived(ReservationEvent event) implements Command {}

  record ListingChanged(Receptionist.Listing listing) implements Command {}

  record InfoArrived(ActorRef<AgentRequest> agent, ReplicaInfo info) implements Command {}

  record MemberLeft(ClusterEvent.MemberRemoved removed) implements Command {}

  /** The tracker refused a batch: it misses earlier ones. */
  public record Gap(GapDetected gap) implements Command {}

  record ReplayArrived(ReplayReply reply) implements Command {}

  record ReplayFailed(String replicaId) implements Command {}

  private static final Duration ASK_TIMEOUT = Duration.ofSeconds(10);

  private final ActorRef<KvTracker.Command> tracker;
  private final ReplicaDirectory directory;
  private final String selfIngressId;
  private final Map<ActorRef<AgentRequest>, String> agents = new HashMap<>();
  private final Map<String, ActorRef<AgentRequest>> agentOf = new HashMap<>();
  private final Set<String> replaying = new HashSet<>();

  private TrackerFeeds(
      ActorContext<Command> context,
      ActorRef<KvTracker.Command> tracker,
      ReplicaDirectory directory,
      String selfIngressId,
      ActorRef<Topic.Command<KvEventBatch>> events,
      ActorRef<Topic.Command<ReplicaLoad>> load,
      ActorRef<Topic.Command<ReservationEvent>> reservations) {
    super(context);
    this.tracker = tracker;
    this.directory = directory;
    this.selfIngressId = selfIngressId;
    events.tell(Topic.subscribe(context.messageAdapter(KvEventBatch.class, BatchArrived::new)));
    load.tell(Topic.subscribe(context.messageAdapter(ReplicaLoad.class, LoadArrived::new)));
    reservations.tell(
        Topic.subscribe(context.messageAdapter(ReservationEvent.class, ReservationArrived::new)));
    context
        .getSystem()
        .receptionist()
        .tell(
            Receptionist.subscribe(
                AgentRequest.SERVICE_KEY,
                context.messageAdapter(Receptionist.Listing.class, ListingChanged::new)));
    Cluster.get(context.getSystem())
        .subscriptions()
        .tell(
            Subscribe.create(
                context.messageAdapter(ClusterEvent.MemberRemoved.class, MemberLeft::new),
                ClusterEvent.MemberRemoved.class));
  }

  /**
   * @param selfIngressId this node's ingress id: its own reservation events are not re-applied
   */
  public static Behavior<Command> create(
      ActorRef<KvTracker.Command> tracker,
      ReplicaDirectory directory,
      String selfIngressId,
      ActorRef<Topic.Command<KvEventBatch>> events,
      ActorRef<Topic.Command<ReplicaLoad>> load,
      ActorRef<Topic.Command<ReservationEvent>> reservations) {
    return Behaviors.setup(
        ctx -> new TrackerFeeds(ctx, tracker, directory, selfIngressId, events, load, reservations));
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(BatchArrived.class, m -> forward(new KvTracker.ApplyBatch(m.batch())))
        .onMessage(LoadArrived.class, m -> forward(new KvTracker.LoadReported(m.load())))
        .onMessage(ReservationArrived.class, this::onReservation)
        .onMessage(ListingChanged.class, this::onListing)
        .onMessage(InfoArrived.class, this::onInfo)
        .onMessage(MemberLeft.class, this::onMemberLeft)
        .onMessage(Gap.class, this::onGap)
        .onMessage(ReplayArrived.class, this::onReplay)
        .onMessage(ReplayFailed.class, m -> {
          replaying.remove(m.replicaId());
          return this;
        })
        .build();
  }

  private Behavior<Command> forward(KvTracker.Command command) {
    tracker.tell(command);
    return this;
  }

  private Behavior<Command> onReservation(ReservationArrived m) {
    if (!m.event().ingressId().equals(selfIngressId)) {
      tracker.tell(new KvTracker.ApplyReservation(m.event()));
    }
    return this;
  }

  private Behavior<Command> onListing(ListingChanged m) {
    Set<ActorRef<AgentRequest>> now = m.listing().getServiceInstances(AgentRequest.SERVICE_KEY);
    for (ActorRef<AgentRequest> agent : now) {
      if (!agents.containsKey(agent)) {
        agents.put(agent, null);
        getContext()
            .ask(
                ReplicaInfo.class,
                agent,
                ASK_TIMEOUT,
                GetInfo::new,
                (info, error) -> info == null ? null : new InfoArrived(agent, info));
      }
    }
    for (ActorRef<AgentRequest> gone : Set.copyOf(agents.keySet())) {
      if (!now.contains(gone)) {
        String targetId = agents.remove(gone);
        if (targetId != null) {
          agentOf.remove(targetId);
          directory.remove(targetId);
          tracker.tell(new KvTracker.ReplicaDown(targetId));
          getContext().getLog().info("replica {} left", targetId);
        }
      }
    }
    return this;
  }

  private Behavior<Command> onInfo(InfoArrived m) {
    if (!agents.containsKey(m.agent())) {
      return this; // it left before answering
    }
    String targetId = m.info().targetId();
    agents.put(m.agent(), targetId);
    agentOf.put(targetId, m.agent());
    directory.put(m.info());
    tracker.tell(new KvTracker.ReplicaUp(m.info()));
    getContext().getLog().info("replica {} joined: {} at {}", targetId, m.info().model(), m.info().baseUrl());
    // Bootstrap from the agent: a snapshot brings this tracker level with batches it missed.
    return onGap(new Gap(new GapDetected(targetId, Long.MIN_VALUE, 0)));
  }

  private Behavior<Command> onMemberLeft(MemberLeft m) {
    if (m.removed().member().hasRole("ingress")) {
      tracker.tell(new KvTracker.IngressLeft(m.removed().member().address().toString()));
    }
    return this;
  }

  private Behavior<Command> onGap(Gap m) {
    String replicaId = m.gap().replicaId();
    ActorRef<AgentRequest> agent = agentOf.get(replicaId);
    if (agent == null || !replaying.add(replicaId)) {
      return this; // unknown yet (its listing will come) or a replay is already under way
    }
    getContext()
        .ask(
            ReplayReply.class,
            agent,
            ASK_TIMEOUT,
            replyTo -> new RequestReplay(replicaId, m.gap().epoch(), m.gap().fromSeq(), replyTo),
            (reply, error) -> reply == null ? new ReplayFailed(replicaId) : new ReplayArrived(reply));
    return this;
  }

  private Behavior<Command> onReplay(ReplayArrived m) {
    replaying.remove(m.reply().replicaId());
    if (m.reply() instanceof Replayed replayed) {
      for (KvEventBatch batch : replayed.batches()) {
        tracker.tell(new KvTracker.ApplyBatch(batch));
      }
    } else if (m.reply() instanceof SnapshotReply snapshot) {
      tracker.tell(new KvTracker.InstallSnapshot(snapshot.snapshot()));
    }
    return this;
  }
}

package io.kvrouter.ingress.node;

import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.routing.ReplicaDirectory;
import io.kvrouter.protocol.AgentRequest;
import io.kvrouter.protocol.GetInfo;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplayReply;
import io.kvrouter.protocol.Replayed;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.RequestReplay;
import io.kvrouter.protocol.SnapshotReply;
import io.kvrouter.protocol.Topics;
import io.kvrouter.tracker.actor.KvTracker;
import io.kvrouter.tracker.feed.GapDetected;
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
 * The replica side of one ingress's tracker: KV event batches, load heartbeats and replicas'
 * re-announced infos (their LoRA adapters) from the agents' topics, replicas coming and going
 * through the Receptionist, ingress nodes leaving the cluster; and it repairs the gaps the tracker
 * reports by asking the replica's agent to replay (or for a snapshot). A replica that joins is
 * bootstrapped from its agent's snapshot; this side of the node is ready ({@link
 * IngressReadiness.Component#REPLICAS}, reported on every change) once some replica serves and
 * every known replica's bootstrap and replay is done.
 *
 * <p>Thin: it only translates and forwards; the rules live in the tracker's plain-Java core.
 */
public final class TrackerFeeds extends AbstractBehavior<TrackerFeeds.Command> {

  /** What the feeds receive. */
  public sealed interface Command
      permits BatchArrived,
          LoadArrived,
          ListingChanged,
          InfoArrived,
          InfoAnnounced,
          MemberLeft,
          Gap,
          ReplayArrived,
          ReplayFailed,
          PauseEvents,
          InfoFailed,
          Nothing {}

  record BatchArrived(KvEventBatch batch) implements Command {}

  record LoadArrived(ReplicaLoad load) implements Command {}

  record ListingChanged(Receptionist.Listing listing) implements Command {}

  record InfoArrived(ActorRef<AgentRequest> agent, ReplicaInfo info) implements Command {}

  /** An agent announced its replica again (on {@code kvrouter-replica-info}). */
  record InfoAnnounced(ReplicaInfo info) implements Command {}

  record MemberLeft(ClusterEvent.MemberRemoved removed) implements Command {}

  /** The tracker refused a batch, or a heartbeat showed it behind: it misses earlier batches. */
  public record Gap(GapDetected gap) implements Command {}

  record InfoFailed(ActorRef<AgentRequest> agent) implements Command {}

  record ReplayArrived(ReplayReply reply) implements Command {}

  record ReplayFailed(String replicaId) implements Command {}

  /** Debug: stop (or resume) applying KV event batches, to make this tracker lag on purpose. */
  public record PauseEvents(boolean paused) implements Command {}

  enum Nothing implements Command {
    INSTANCE
  }

  private final ActorRef<KvTracker.Command> tracker;
  private final ReplicaDirectory directory;
  private final IngressMetrics metrics;
  private final ActorRef<IngressReadiness.Command> readiness;
  private final Duration askTimeout;
  private final FaultInjector<KvEventBatch> faults;

  /** The listed agents, each with its replica once its info arrived (null until then). */
  private final Map<ActorRef<AgentRequest>, String> agents = new HashMap<>();

  private final Map<String, ActorRef<AgentRequest>> agentOf = new HashMap<>();
  private final Set<String> replaying = new HashSet<>();
  private boolean listingSeen;
  private boolean paused;
  private Boolean reportedReady;

  private TrackerFeeds(
      ActorContext<Command> context,
      ActorRef<KvTracker.Command> tracker,
      ReplicaDirectory directory,
      IngressMetrics metrics,
      ActorRef<IngressReadiness.Command> readiness,
      Duration askTimeout,
      FaultInjector<KvEventBatch> faults) {
    super(context);
    this.tracker = tracker;
    this.directory = directory;
    this.metrics = metrics;
    this.readiness = readiness;
    this.askTimeout = askTimeout;
    this.faults = faults;
    ActorRef<Topic.Command<KvEventBatch>> events =
        context.spawn(Topics.kvEvents(), "kv-events-topic");
    ActorRef<Topic.Command<ReplicaLoad>> load =
        context.spawn(Topics.replicaLoad(), "replica-load-topic");
    events.tell(Topic.subscribe(context.messageAdapter(KvEventBatch.class, BatchArrived::new)));
    load.tell(Topic.subscribe(context.messageAdapter(ReplicaLoad.class, LoadArrived::new)));
    ActorRef<Topic.Command<ReplicaInfo>> infos =
        context.spawn(Topics.replicaInfo(), "replica-info-topic");
    infos.tell(Topic.subscribe(context.messageAdapter(ReplicaInfo.class, InfoAnnounced::new)));
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
   * @param readiness told whether this side is ready ({@link IngressReadiness.Component#REPLICAS})
   * @param askTimeout how long to wait for an agent's info or replay
   */
  public static Behavior<Command> create(
      ActorRef<KvTracker.Command> tracker,
      ReplicaDirectory directory,
      IngressMetrics metrics,
      ActorRef<IngressReadiness.Command> readiness,
      Duration askTimeout,
      FaultInjector<KvEventBatch> faults) {
    return Behaviors.setup(
        ctx -> new TrackerFeeds(ctx, tracker, directory, metrics, readiness, askTimeout, faults));
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(BatchArrived.class, this::onBatch)
        .onMessage(LoadArrived.class, this::onLoad)
        .onMessage(ListingChanged.class, this::onListing)
        .onMessage(InfoArrived.class, this::onInfo)
        .onMessage(InfoAnnounced.class, this::onAnnounced)
        .onMessage(InfoFailed.class, this::onInfoFailed)
        .onMessage(MemberLeft.class, this::onMemberLeft)
        .onMessage(Gap.class, this::onGap)
        .onMessage(ReplayArrived.class, this::onReplay)
        .onMessage(ReplayFailed.class, m -> done(m.replicaId()))
        .onMessage(PauseEvents.class, this::onPause)
        .onMessageEquals(Nothing.INSTANCE, () -> this)
        .build();
  }

  private Behavior<Command> onLoad(LoadArrived m) {
    tracker.tell(new KvTracker.LoadReported(m.load()));
    return this;
  }

  private Behavior<Command> onInfoFailed(InfoFailed m) {
    if (!agents.containsKey(m.agent())) {
      return updateCaughtUp(); // it left before answering: the listing dropped it
    }
    // Still registered: ask again (each failed ask has waited the ask timeout). Before, the agent
    // stayed unknown until the listing changed again, which may be never.
    getContext().getLog().warn("agent {} did not say what it serves; asking again", m.agent());
    askInfo(m.agent());
    return this;
  }

  private void askInfo(ActorRef<AgentRequest> agent) {
    getContext()
        .ask(
            ReplicaInfo.class,
            agent,
            askTimeout,
            GetInfo::new,
            (info, error) -> info == null ? new InfoFailed(agent) : new InfoArrived(agent, info));
  }

  private Behavior<Command> onPause(PauseEvents m) {
    paused = m.paused();
    getContext()
        .getLog()
        .warn("KV event batches {} on this tracker (debug)", paused ? "paused" : "resumed");
    return this;
  }

  private Behavior<Command> onBatch(BatchArrived m) {
    if (paused) {
      return this;
    }
    if (m.batch().publishedMillis() > 0) {
      metrics.tracker().eventLag(System.currentTimeMillis() - m.batch().publishedMillis());
    }
    for (KvEventBatch b : faults.pass(m.batch())) {
      tracker.tell(new KvTracker.ApplyBatch(b));
    }
    return this;
  }

  private Behavior<Command> onListing(ListingChanged m) {
    listingSeen = true;
    Set<ActorRef<AgentRequest>> now = m.listing().getServiceInstances(AgentRequest.SERVICE_KEY);
    for (ActorRef<AgentRequest> agent : now) {
      if (!agents.containsKey(agent)) {
        agents.put(agent, null);
        askInfo(agent);
      }
    }
    for (ActorRef<AgentRequest> gone : Set.copyOf(agents.keySet())) {
      if (!now.contains(gone)) {
        String targetId = agents.remove(gone);
        // A restarted agent may register again before its old incarnation is unlisted: the
        // replica stays as long as some agent still serves it.
        if (targetId != null && gone.equals(agentOf.get(targetId))) {
          agentOf.remove(targetId);
          directory.remove(targetId);
          replaying.remove(targetId);
          tracker.tell(new KvTracker.ReplicaDown(targetId));
          getContext().getLog().info("replica {} left", targetId);
        }
      }
    }
    return updateCaughtUp();
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
    getContext()
        .getLog()
        .info("replica {} joined: {} at {}", targetId, m.info().model(), m.info().baseUrl());
    // Bootstrap from the agent: a snapshot brings this tracker level with batches it missed.
    return requestReplay(targetId, Long.MIN_VALUE, 0);
  }

  /**
   * A known replica's info as its agent announces it now (its LoRA adapters change at run time, its
   * alignment verdict after an engine restart): the directory takes it, and the tracker a changed
   * verdict. A replica not known yet is left to its registration's {@link GetInfo}, so an
   * announcement never brings in a replica its agent has not registered.
   */
  private Behavior<Command> onAnnounced(InfoAnnounced m) {
    String targetId = m.info().targetId();
    ReplicaInfo known = agentOf.containsKey(targetId) ? directory.get(targetId).orElse(null) : null;
    if (known == null || known.equals(m.info())) {
      return this;
    }
    directory.put(m.info());
    if (!known.alignment().equals(m.info().alignment())) {
      // The tracker trusts a replica's index by its alignment: it takes the new verdict.
      tracker.tell(new KvTracker.ReplicaUp(m.info()));
      getContext()
          .getLog()
          .info(
              "replica {} now {}{}",
              targetId,
              m.info().alignment().state().label(),
              m.info().alignment().reason().isEmpty() ? "" : ": " + m.info().alignment().reason());
    }
    if (!known.adapters().equals(m.info().adapters())) {
      getContext()
          .getLog()
          .info("replica {} now serves LoRA adapters {}", targetId, m.info().adapters());
    }
    return this;
  }

  private Behavior<Command> onMemberLeft(MemberLeft m) {
    if (m.removed().member().hasRole("ingress")) {
      tracker.tell(new KvTracker.IngressLeft(m.removed().member().address().toString()));
    }
    return this;
  }

  private Behavior<Command> onGap(Gap m) {
    metrics.tracker().gap("events");
    return requestReplay(m.gap().replicaId(), m.gap().epoch(), m.gap().fromSeq());
  }

  private Behavior<Command> requestReplay(String replicaId, long epoch, long fromSeq) {
    ActorRef<AgentRequest> agent = agentOf.get(replicaId);
    if (agent == null || !replaying.add(replicaId)) {
      return updateCaughtUp(); // unknown yet (its listing will come) or a replay is under way
    }
    metrics.tracker().replay("events");
    getContext()
        .ask(
            ReplayReply.class,
            agent,
            askTimeout,
            replyTo -> new RequestReplay(replicaId, epoch, fromSeq, replyTo),
            (reply, error) ->
                reply == null ? new ReplayFailed(replicaId) : new ReplayArrived(reply));
    return updateCaughtUp();
  }

  private Behavior<Command> onReplay(ReplayArrived m) {
    if (m.reply() instanceof Replayed replayed) {
      for (KvEventBatch batch : replayed.batches()) {
        tracker.tell(new KvTracker.ApplyBatch(batch));
      }
    } else if (m.reply() instanceof SnapshotReply snapshot) {
      metrics.tracker().snapshot("events");
      tracker.tell(new KvTracker.InstallSnapshot(snapshot.snapshot()));
    }
    return done(m.reply().replicaId());
  }

  private Behavior<Command> done(String replicaId) {
    replaying.remove(replicaId);
    return updateCaughtUp();
  }

  private Behavior<Command> updateCaughtUp() {
    boolean ready =
        listingSeen
            && replaying.isEmpty()
            && !agents.containsValue(null)
            && !directory.models().isEmpty();
    if (!Boolean.valueOf(ready).equals(reportedReady)) {
      reportedReady = ready;
      readiness.tell(new IngressReadiness.Report(IngressReadiness.Component.REPLICAS, ready));
    }
    return this;
  }
}

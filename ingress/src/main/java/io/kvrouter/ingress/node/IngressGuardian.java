package io.kvrouter.ingress.node;

import com.typesafe.config.Config;
import io.kvrouter.config.node.NodeFailed;
import io.kvrouter.config.node.RoleGuardian;
import io.kvrouter.config.serialization.WireTraffic;
import io.kvrouter.ingress.api.RequestTokenizer;
import io.kvrouter.ingress.consistency.ConsistencyGatherer;
import io.kvrouter.ingress.extproc.ExtProcServer;
import io.kvrouter.ingress.http.IngressFrontend;
import io.kvrouter.ingress.http.IngressSettings;
import io.kvrouter.ingress.metrics.AccuracySettings;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.routing.LoraSettings;
import io.kvrouter.ingress.routing.ReplicaDirectory;
import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.routing.RouterBlockSize;
import io.kvrouter.ingress.routing.SteeringSettings;
import io.kvrouter.ingress.routing.TrackerRouter;
import io.kvrouter.ingress.strict.StrictGate;
import io.kvrouter.ingress.tokenize.PromptEncoder;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.ingress.traffic.IngressTraffic;
import io.kvrouter.ingress.traffic.PeerQueues;
import io.kvrouter.ingress.traffic.ProgramHold;
import io.kvrouter.ingress.traffic.SessionRouter;
import io.kvrouter.ingress.traffic.TrafficMetrics;
import io.kvrouter.ingress.traffic.TrafficPlane;
import io.kvrouter.ingress.traffic.TrafficSettings;
import io.kvrouter.protocol.IntentMessage;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.TrackerRequest;
import io.kvrouter.tracker.TrackerConfig;
import io.kvrouter.tracker.actor.KvTracker;
import io.kvrouter.tracker.feed.GapDetected;
import io.kvrouter.tracker.steering.QueueAheadTtftPredictor;
import io.kvrouter.tracker.sync.ReservationGap;
import java.net.InetSocketAddress;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.http.javadsl.ServerBinding;

/**
 * The guardian of an ingress node: spawns the node's {@link IngressReadiness}, its {@link
 * KvTracker}, the {@link TrackerFeeds} that keep it level with the replicas and the {@link
 * PeerSync} that keeps it level with the other ingresses, the traffic management actors ({@link
 * TrafficPlane}: session bindings and tenant limits in Distributed Data), and binds the HTTP front
 * once wired. Configuration comes from the node's own {@code kvrouter.ingress}, {@code
 * kvrouter.tracker}, {@code kvrouter.consistency}, {@code kvrouter.traffic} and {@code
 * kvrouter.models}, read once here, so several ingress nodes can share a JVM.
 */
public final class IngressGuardian extends AbstractBehavior<IngressGuardian.Command> {

  /** The guardian's messages: what its children hand it. */
  public sealed interface Command
      permits Outgoing,
          OutgoingIntent,
          EventGap,
          ReservationGapFound,
          Bound,
          BindFailed,
          RefreshGauges,
          LoadsArrived,
          Nothing {}

  /** The tracker made a reservation event: broadcast it. */
  record Outgoing(ReservationEvent event) implements Command {}

  /** The tracker made an intent or a timing model to share: broadcast it. */
  record OutgoingIntent(IntentMessage message) implements Command {}

  /** The tracker misses KV event batches. */
  record EventGap(GapDetected gap) implements Command {}

  /** The tracker misses a peer's reservation events. */
  record ReservationGapFound(ReservationGap gap) implements Command {}

  record Bound(ServerBinding binding) implements Command {}

  record BindFailed(Throwable error) implements Command {}

  /** Time to refresh the per-replica gauges. */
  enum RefreshGauges implements Command {
    INSTANCE
  }

  record LoadsArrived(KvTracker.Loads loads) implements Command {}

  enum Nothing implements Command {
    INSTANCE
  }

  private final IngressNodeSettings nodeSettings;
  private final ActorRef<IngressReadiness.Command> readiness;
  private final ActorRef<KvTracker.Command> tracker;
  private final ActorRef<TrackerFeeds.Command> feeds;
  private final ActorRef<TrackerRequest> peerSync;
  private final IngressMetrics metrics;

  /** The {@link RoleGuardian} for role {@code ingress}. */
  public static RoleGuardian roleGuardian() {
    return roleGuardian(address -> {});
  }

  /**
   * The same, telling {@code onBound} where the HTTP API listens once bound (with {@code
   * kvrouter.ingress.http.port = 0} that is how to learn the port).
   */
  public static RoleGuardian roleGuardian(Consumer<InetSocketAddress> onBound) {
    return () -> create(onBound);
  }

  public static Behavior<Command> create() {
    return create(address -> {});
  }

  static Behavior<Command> create(Consumer<InetSocketAddress> onBound) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers -> {
                  IngressNodeSettings nodeSettings =
                      IngressNodeSettings.fromConfig(ctx.getSystem().settings().config());
                  timers.startTimerWithFixedDelay(
                      RefreshGauges.INSTANCE, nodeSettings.gaugeInterval());
                  return new IngressGuardian(ctx, nodeSettings, onBound);
                }));
  }

  private final Consumer<InetSocketAddress> onBound;

  private IngressGuardian(
      ActorContext<Command> ctx,
      IngressNodeSettings nodeSettings,
      Consumer<InetSocketAddress> onBound) {
    super(ctx);
    this.nodeSettings = nodeSettings;
    this.onBound = onBound;
    Config config = ctx.getSystem().settings().config();
    IngressSettings settings = IngressSettings.fromConfig(config);
    TrackerSettings trackerSettings = TrackerSettings.fromConfig(config);
    TokenizerRegistry tokenizers = TokenizerRegistry.fromConfig(config);
    String ingressId = Cluster.get(ctx.getSystem()).selfMember().address().toString();
    TrackerConfig trackerConfig = trackerSettings.trackerConfig(ingressId);
    StrictGate gate =
        nodeSettings.consistency() == IngressNodeSettings.Consistency.STRICT
            ? new StrictGate(
                ctx.getSystem(), nodeSettings.askTimeout(), trackerConfig.leaseMillis())
            : null;
    metrics = new IngressMetrics(AccuracySettings.fromConfig(config));
    metrics.tracker().wire(WireTraffic.get(ctx.getSystem()));
    readiness = ctx.spawn(IngressReadiness.create(), "readiness");

    tracker =
        ctx.spawn(
            KvTracker.create(
                trackerConfig,
                System::currentTimeMillis,
                trackerSettings.tickInterval(),
                ctx.messageAdapter(ReservationEvent.class, Outgoing::new),
                ctx.messageAdapter(GapDetected.class, EventGap::new),
                ctx.messageAdapter(ReservationGap.class, ReservationGapFound::new),
                ctx.messageAdapter(IntentMessage.class, OutgoingIntent::new),
                true),
            "tracker");
    ReplicaDirectory directory = new ReplicaDirectory();
    int salt = ingressId.hashCode();
    feeds =
        ctx.spawn(
            TrackerFeeds.create(
                tracker,
                directory,
                metrics,
                readiness,
                nodeSettings.clusterAskTimeout(),
                FaultInjector.<KvEventBatch>fromConfig(config, salt)),
            "feeds");
    IngressTraffic traffic =
        TrafficPlane.spawn(ctx, config, new TrafficMetrics(metrics.registry()), ingressId);
    // A peer's release wakes the router queue on the dispatcher, not on the sync's own thread.
    Executor dispatcher = ctx.getExecutionContext();
    PeerQueues peerQueues = traffic.peers();
    peerSync =
        ctx.spawn(
            PeerSync.create(
                tracker,
                ingressId,
                metrics,
                readiness,
                nodeSettings,
                trackerConfig.compactReservations(),
                FaultInjector.<ReservationEvent>fromConfig(config, ~salt),
                () -> dispatcher.execute(peerQueues::freed)),
            "peer-sync");

    TrafficSettings ts = traffic.settings();
    LoraSettings lora = LoraSettings.fromConfig(config);
    Router router =
        new TrackerRouter(
            tracker,
            ctx.getSystem().scheduler(),
            nodeSettings.askTimeout(),
            directory,
            tokenizers,
            metrics,
            gate,
            new SteeringSettings(
                ts.sessions().affinityBonusTokens(),
                new QueueAheadTtftPredictor(ts.sloBaseMillis(), ts.sloMillisPerToken()),
                lora.loadPenaltyTokens()),
            lora);
    if (ts.sessions().enabled()) {
      ProgramHold.Settings hold = ProgramHold.Settings.fromConfig(config);
      router =
          new SessionRouter(
              router,
              traffic.sessions(),
              ts.sessions().refreshAfter().toMillis(),
              System::currentTimeMillis,
              traffic.metrics(),
              hold.enabled() ? new ProgramHold(hold) : null);
    }
    NodeAdminView admin =
        new NodeAdminView(
            ctx.getSystem(),
            nodeSettings.askTimeout(),
            tracker,
            feeds,
            directory,
            new ConsistencyGatherer(
                () ->
                    AskPattern.<TrackerRequest, PeerSync.Peers>ask(
                            peerSync,
                            PeerSync.GetPeers::new,
                            nodeSettings.askTimeout(),
                            ctx.getSystem().scheduler())
                        .thenApply(PeerSync.Peers::byIngress),
                ctx.getSystem().scheduler(),
                nodeSettings.consistencyGatherTimeout(),
                metrics),
            readiness,
            new RouterBlockSize(tokenizers, directory));
    IngressReadiness.register(ctx.getSystem(), readiness, nodeSettings.askTimeout());
    PromptEncoder encoder = IngressFrontend.promptEncoder(ctx.getSystem(), tokenizers);
    ExtProcServer.startIfEnabled(
        ctx.getSystem(),
        router,
        new RequestTokenizer(tokenizers, router, settings.defaultModel(), encoder));
    ctx.pipeToSelf(
        IngressFrontend.start(
            ctx.getSystem(), settings, tokenizers, router, metrics, admin, traffic, encoder),
        (binding, error) -> binding != null ? new Bound(binding) : new BindFailed(error));
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Outgoing.class, this::onOutgoing)
        .onMessage(OutgoingIntent.class, m -> send(new PeerSync.OutgoingIntent(m.message())))
        .onMessage(EventGap.class, this::onEventGap)
        .onMessage(ReservationGapFound.class, this::onReservationGap)
        .onMessage(Bound.class, this::onBound)
        .onMessage(BindFailed.class, this::onBindFailed)
        .onMessageEquals(RefreshGauges.INSTANCE, this::onRefreshGauges)
        .onMessage(LoadsArrived.class, this::onLoads)
        .onMessageEquals(Nothing.INSTANCE, () -> this)
        .build();
  }

  private Behavior<Command> onOutgoing(Outgoing m) {
    peerSync.tell(new PeerSync.Outgoing(m.event()));
    return this;
  }

  private Behavior<Command> send(PeerSync.OutgoingIntent m) {
    peerSync.tell(m);
    return this;
  }

  private Behavior<Command> onEventGap(EventGap m) {
    feeds.tell(new TrackerFeeds.Gap(m.gap()));
    return this;
  }

  private Behavior<Command> onReservationGap(ReservationGapFound m) {
    peerSync.tell(new PeerSync.Gap(m.gap()));
    return this;
  }

  private Behavior<Command> onRefreshGauges() {
    getContext()
        .ask(
            KvTracker.Loads.class,
            tracker,
            nodeSettings.askTimeout(),
            KvTracker.GetLoads::new,
            (loads, error) -> loads == null ? Nothing.INSTANCE : new LoadsArrived(loads));
    return this;
  }

  private Behavior<Command> onLoads(LoadsArrived m) {
    m.loads()
        .byReplica()
        .forEach((replica, load) -> metrics.tracker().inflight(replica, load.inFlight()));
    metrics.tracker().trackerStats(m.loads().stats());
    m.loads().lagMillis().forEach(metrics.tracker()::lag);
    return this;
  }

  private Behavior<Command> onBound(Bound m) {
    readiness.tell(new IngressReadiness.Report(IngressReadiness.Component.HTTP, true));
    onBound.accept(m.binding().localAddress());
    getContext()
        .getLog()
        .info(
            "kvrouter ingress listening on http://{}:{}",
            m.binding().localAddress().getHostString(),
            m.binding().localAddress().getPort());
    return this;
  }

  /** A node that cannot serve HTTP leaves and exits (status 1) rather than idle in the cluster. */
  private Behavior<Command> onBindFailed(BindFailed m) {
    getContext().getLog().error("kvrouter ingress could not bind its HTTP port", m.error());
    CoordinatedShutdown.get(Adapter.toClassic(getContext().getSystem()))
        .run(new NodeFailed("the ingress could not bind its HTTP port: " + m.error()));
    return Behaviors.stopped();
  }
}

package io.kvrouter.ingress.node;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.Config;
import io.kvrouter.config.node.RoleGuardian;
import io.kvrouter.ingress.http.AdminView;
import io.kvrouter.ingress.http.IngressFrontend;
import io.kvrouter.ingress.http.IngressSettings;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.routing.ReplicaDirectory;
import io.kvrouter.ingress.routing.TrackerRouter;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.tracker.ReplicaLoadSnapshot;
import io.kvrouter.tracker.TrackerConfig;
import io.kvrouter.tracker.TrackerDigests;
import io.kvrouter.tracker.actor.GapDetected;
import io.kvrouter.tracker.actor.KvTracker;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.http.javadsl.ServerBinding;

/**
 * The guardian of an ingress node: spawns the node's {@link KvTracker} and the
 * {@link TrackerFeeds} that keep it in step with the cluster, publishes the tracker's
 * reservation events, and binds the HTTP front. Configuration comes from the node's own
 * {@code kvrouter.ingress} and {@code kvrouter.models}, so several ingress nodes can share a JVM.
 */
public final class IngressGuardian extends AbstractBehavior<IngressGuardian.Command> {

  /** The guardian's messages: what its children hand it. */
  public sealed interface Command permits Outgoing, GapFound, Bound, BindFailed, RefreshGauges, LoadsArrived {}

  /** Time to refresh the per-replica gauges. */
  enum RefreshGauges implements Command { INSTANCE }

  record LoadsArrived(KvTracker.Loads loads) implements Command {}

  /** The tracker made a reservation event: broadcast it. */
  record Outgoing(ReservationEvent event) implements Command {}

  /** The tracker refused a batch for a gap: have the feeds repair it. */
  record GapFound(GapDetected gap) implements Command {}

  record Bound(ServerBinding binding) implements Command {}

  record BindFailed(Throwable error) implements Command {}

  private static final Duration ASK_TIMEOUT = Duration.ofSeconds(5);

  private final ActorRef<Topic.Command<ReservationEvent>> reservations;
  private final ActorRef<TrackerFeeds.Command> feeds;
  private final AtomicBoolean ready;
  private final ActorRef<KvTracker.Command> tracker;
  private final IngressMetrics metrics;

  /** The {@link RoleGuardian} for role {@code ingress}. */
  public static RoleGuardian roleGuardian() {
    return IngressGuardian::create;
  }

  public static Behavior<Command> create() {
    return Behaviors.setup(
        ctx -> Behaviors.withTimers(
            timers -> {
              timers.startTimerWithFixedDelay(RefreshGauges.INSTANCE, Duration.ofSeconds(1));
              return new IngressGuardian(ctx);
            }));
  }

  private IngressGuardian(ActorContext<Command> ctx) {
    super(ctx);
    Config config = ctx.getSystem().settings().config();
    IngressSettings settings = IngressSettings.fromConfig(config);
    TokenizerRegistry tokenizers = TokenizerRegistry.fromConfig(config);
    String ingressId = Cluster.get(ctx.getSystem()).selfMember().address().toString();
    TrackerConfig trackerConfig =
        TrackerConfig.defaults(ingressId).withPolicy(config.getString("kvrouter.tracker.policy"));

    ActorRef<Topic.Command<KvEventBatch>> events =
        ctx.spawn(Topic.create(KvEventBatch.class, TrackerFeeds.KV_EVENTS_TOPIC), "kv-events-topic");
    ActorRef<Topic.Command<ReplicaLoad>> load =
        ctx.spawn(Topic.create(ReplicaLoad.class, TrackerFeeds.REPLICA_LOAD_TOPIC), "replica-load-topic");
    reservations =
        ctx.spawn(Topic.create(ReservationEvent.class, TrackerFeeds.RESERVATIONS_TOPIC), "reservations-topic");

    tracker =
        ctx.spawn(
            KvTracker.create(
                trackerConfig,
                System::currentTimeMillis,
                config.getDuration("kvrouter.tracker.tick-interval"),
                ctx.messageAdapter(ReservationEvent.class, Outgoing::new),
                ctx.messageAdapter(GapDetected.class, GapFound::new)),
            "tracker");
    ReplicaDirectory directory = new ReplicaDirectory();
    feeds = ctx.spawn(TrackerFeeds.create(tracker, directory, ingressId, events, load, reservations), "feeds");

    metrics = new IngressMetrics();
    TrackerRouter router =
        new TrackerRouter(tracker, ctx.getSystem().scheduler(), ASK_TIMEOUT, directory, tokenizers, metrics);
    ready = new AtomicBoolean();
    AdminView admin = new NodeAdminView(ctx, tracker, directory, ready);
    ctx.pipeToSelf(
        IngressFrontend.start(ctx.getSystem(), settings, tokenizers, router, metrics, admin),
        (binding, error) -> binding != null ? new Bound(binding) : new BindFailed(error));
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Outgoing.class, this::onOutgoing)
        .onMessage(GapFound.class, this::onGap)
        .onMessage(Bound.class, this::onBound)
        .onMessage(BindFailed.class, this::onBindFailed)
        .onMessageEquals(RefreshGauges.INSTANCE, this::onRefreshGauges)
        .onMessage(LoadsArrived.class, this::onLoads)
        .build();
  }

  private Behavior<Command> onOutgoing(Outgoing m) {
    reservations.tell(Topic.publish(m.event()));
    return this;
  }

  private Behavior<Command> onGap(GapFound m) {
    feeds.tell(new TrackerFeeds.Gap(m.gap()));
    return this;
  }

  private Behavior<Command> onRefreshGauges() {
    getContext().ask(KvTracker.Loads.class, tracker, ASK_TIMEOUT, KvTracker.GetLoads::new,
        (loads, error) -> loads == null ? null : new LoadsArrived(loads));
    return this;
  }

  private Behavior<Command> onLoads(LoadsArrived m) {
    m.loads().byReplica().forEach((replica, load) -> metrics.inflight(replica, load.inFlight()));
    return this;
  }

  private Behavior<Command> onBound(Bound m) {
    ready.set(true);
    getContext().getLog().info("kvrouter ingress listening on http://{}:{}",
        m.binding().localAddress().getHostString(), m.binding().localAddress().getPort());
    return this;
  }

  private Behavior<Command> onBindFailed(BindFailed m) {
    getContext().getLog().error("kvrouter ingress could not bind its HTTP port", m.error());
    throw new IllegalStateException("HTTP bind failed", m.error());
  }

  /** Admin views over the node's tracker and directory. */
  private static final class NodeAdminView implements AdminView {
    private final ActorContext<Command> ctx;
    private final ActorRef<KvTracker.Command> tracker;
    private final ReplicaDirectory directory;
    private final AtomicBoolean ready;

    NodeAdminView(
        ActorContext<Command> ctx,
        ActorRef<KvTracker.Command> tracker,
        ReplicaDirectory directory,
        AtomicBoolean ready) {
      this.ctx = ctx;
      this.tracker = tracker;
      this.directory = directory;
      this.ready = ready;
    }

    @Override
    public CompletionStage<JsonNode> replicas() {
      CompletionStage<KvTracker.Loads> loadsAsked =
          AskPattern.ask(tracker, KvTracker.GetLoads::new, ASK_TIMEOUT, ctx.getSystem().scheduler());
      return AskPattern.<KvTracker.Command, TrackerDigests>ask(
              tracker, KvTracker.GetDigests::new, ASK_TIMEOUT, ctx.getSystem().scheduler())
          .thenCombine(loadsAsked, (digests, loads) -> {
                ArrayNode list = JsonNodeFactory.instance.arrayNode();
                for (ReplicaInfo info : directory.all()) {
                  ObjectNode r = list.addObject();
                  r.put("replica", info.targetId());
                  r.put("model", info.model());
                  r.put("url", info.baseUrl());
                  r.put("block_size", info.blockSize());
                  r.put("kv_events", info.kvEvents());
                  TrackerDigests.ReplicaState state = digests.replicas().get(info.targetId());
                  if (state != null) {
                    r.put("blocks", state.digest().count());
                    r.put("epoch", state.epoch());
                    r.put("seq", state.seq());
                  }
                  ReplicaLoadSnapshot load = loads.byReplica().get(info.targetId());
                  if (load != null) {
                    r.put("in_flight", load.inFlight());
                    r.put("prefill_tokens", load.prefillTokens());
                    r.put("decode_tokens", load.decodeTokens());
                    r.put("waiting", load.waiting());
                    r.put("running", load.running());
                    r.put("kv_usage", load.kvUsage());
                  }
                }
                return (JsonNode) list;
              });
    }

    @Override
    public boolean ready() {
      return ready.get();
    }
  }
}

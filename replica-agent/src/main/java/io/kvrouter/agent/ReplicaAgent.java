package io.kvrouter.agent;

import io.kvrouter.agent.kvevents.KvEventSubscriber;
import io.kvrouter.protocol.AgentRequest;
import io.kvrouter.protocol.AlignmentStatus;
import io.kvrouter.protocol.EngineIdentity;
import io.kvrouter.protocol.GetInfo;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.RequestReplay;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;

/**
 * The agent of one replica: registers it with the Receptionist under {@link #SERVICE_KEY} once its
 * engine is healthy, settled and aligned ({@link ServingGate}) and has said which APIs it serves
 * ({@link EngineProbe#apis}) and which LoRA adapters ({@link EngineProbe#adapters}), answers {@link
 * GetInfo} and {@link RequestReplay}, publishes load heartbeats and deregisters the replica while
 * its engine fails health checks. Ingresses read a replica's info once per registration, so the
 * APIs are learned before each one (an engine replaced by a newer build while it was down is
 * announced with what the new build serves). Adapters change while the engine runs (vLLM's {@code
 * /v1/load_lora_adapter}), so while the replica is registered the agent reads them again every
 * {@code adapter-refresh-interval} and announces its info on the {@code kvrouter-replica-info}
 * topic, which every ingress reads.
 *
 * <p>The event plane itself does not pass through this actor ({@link AgentEventPlane}): the
 * replica's {@link KvEventSubscriber} thread feeds a {@link ReplicaEventPipeline} whose {@link
 * BatchSink} tells the {@code kvrouter-kv-events} topic (a thread-safe tell). The actor reads the
 * pipeline's ring and snapshot under its short lock. In approximate mode (no KV-event endpoint)
 * there is no pipeline and nothing is published about blocks.
 *
 * <p>Continuity: every health check goes to the subscriber ({@link KvEventSubscriber#healthLost},
 * {@link KvEventSubscriber#healthy} with the engine's process start time), which keeps the
 * replica's blocks only if the engine proves to be the same process with nothing missed and
 * otherwise starts a new epoch. After a failed check the actor publishes nothing and registers
 * nothing until the subscriber has settled that question for a later check, so trackers never take
 * back a picture of an engine that restarted. A replica is registered only once its engine is
 * healthy and the {@link AlignmentProbe} found its blocks keyed as the router keys them (probed
 * again after every engine restart).
 *
 * <p>Each announcement says which engine serves the replica ({@link EngineProbe#identity}: kind,
 * version, hash algorithm and block size, learned with the APIs before each registration; what the
 * engine does not answer reads as unknown and never holds a registration back) and the probe's
 * verdict ({@link AlignmentProbe.Result#status}). With {@code alignment.on-mismatch = warn} a
 * mismatched replica is registered as unaligned, and trackers route to it by load alone; a later
 * verdict that differs (after an engine restart) is announced on {@code kvrouter-replica-info}.
 */
public final class ReplicaAgent extends AbstractBehavior<AgentRequest> {

  /** Every replica agent registers under this key; trackers watch its listing. */
  public static final ServiceKey<AgentRequest> SERVICE_KEY = AgentRequest.SERVICE_KEY;

  /** The agent's own messages (timers, piped results); never cross the wire. */
  private interface Command extends AgentRequest {}

  enum Tick implements Command {
    INSTANCE
  }

  private record HealthChecked(long tick, boolean healthy) implements Command {}

  private record Scraped(long tick, EngineProbe.Scrape scrape) implements Command {}

  private record Settled(long tick) implements Command {}

  private enum EngineRestarted implements Command {
    INSTANCE
  }

  private record Probed(long generation, AlignmentProbe.Result result) implements Command {}

  /**
   * The node is draining: deregister the replica for good (health checks no longer register it
   * again) and answer once the receptionist was told.
   */
  public record Drain(ActorRef<Done> replyTo) implements Command {}

  /**
   * The engine's APIs, or empty when it did not answer; its adapters likewise; its identity, or
   * null when asking failed.
   */
  private record ApisLearned(
      Optional<List<String>> apis, Optional<List<String>> adapters, EngineIdentity identity)
      implements Command {}

  /** Time to ask the engine for its LoRA adapters again. */
  private enum AdapterTick implements Command {
    INSTANCE
  }

  /** The engine's LoRA adapters, or empty when it did not answer. */
  private record AdaptersRead(Optional<List<String>> adapters) implements Command {}

  private final ReplicaSpec spec;
  private final AgentSettings settings;
  private final ActorRef<Topic.Command<ReplicaLoad>> loadTopic;
  private final ActorRef<Topic.Command<ReplicaInfo>> infoTopic;
  private final AgentEventPlane plane;
  private final EngineProbe engine;
  private final ServingGate gate;
  private List<String> apis = List.of();
  private List<String> adapters = List.of();
  private EngineIdentity identity;
  private AlignmentStatus alignment;
  private int probedBlockSize;

  /**
   * @param spec the replica
   * @param settings heartbeat, health, replay and alignment settings
   * @param eventsTopic topic {@code kvrouter-kv-events}
   * @param loadTopic topic {@code kvrouter-replica-load}
   */
  public static Behavior<AgentRequest> create(
      ReplicaSpec spec,
      AgentSettings settings,
      ActorRef<Topic.Command<KvEventBatch>> eventsTopic,
      ActorRef<Topic.Command<ReplicaLoad>> loadTopic) {
    return create(spec, settings, eventsTopic, loadTopic, null);
  }

  /**
   * @param infoTopic topic {@code kvrouter-replica-info}, where the replica's info is announced
   *     again every {@link AgentSettings#adapterRefresh()} while it is registered; null for none
   */
  public static Behavior<AgentRequest> create(
      ReplicaSpec spec,
      AgentSettings settings,
      ActorRef<Topic.Command<KvEventBatch>> eventsTopic,
      ActorRef<Topic.Command<ReplicaLoad>> loadTopic,
      ActorRef<Topic.Command<ReplicaInfo>> infoTopic) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers ->
                    new ReplicaAgent(
                        ctx, timers, spec, settings, eventsTopic, loadTopic, infoTopic)));
  }

  private ReplicaAgent(
      ActorContext<AgentRequest> ctx,
      TimerScheduler<AgentRequest> timers,
      ReplicaSpec spec,
      AgentSettings settings,
      ActorRef<Topic.Command<KvEventBatch>> eventsTopic,
      ActorRef<Topic.Command<ReplicaLoad>> loadTopic,
      ActorRef<Topic.Command<ReplicaInfo>> infoTopic) {
    super(ctx);
    ctx.setLoggerName(ReplicaAgent.class); // log lines name the agent, whatever logs first
    this.spec = spec;
    this.settings = settings;
    this.loadTopic = loadTopic;
    this.infoTopic = infoTopic;
    this.identity =
        new EngineIdentity(settings.engine().kind(), null, settings.engine().hashAlgo(), 0);
    this.alignment =
        !spec.kvEvents()
            ? AlignmentStatus.unchecked("no KV events (approximate mode)")
            : settings.alignment().probe()
                ? AlignmentStatus.UNCHECKED
                : AlignmentStatus.unchecked("alignment probe off");
    this.engine =
        new EngineProbe(
            spec.baseUrl(),
            settings.probeTimeout(),
            spec.dpSize() > 1 ? spec.dpRank() : -1,
            settings.engine().kind());
    ActorRef<AgentRequest> self = ctx.getSelf();
    this.plane =
        AgentEventPlane.start(
            spec,
            settings,
            engine,
            b -> eventsTopic.tell(Topic.publish(b)),
            new KvEventSubscriber.Listener() {
              @Override
              public void onRestart() {
                self.tell(EngineRestarted.INSTANCE);
              }

              @Override
              public void onSettled(long tick) {
                self.tell(new Settled(tick));
              }
            });
    this.gate =
        new ServingGate(
            spec.kvEvents(),
            spec.kvEvents() && settings.alignment().probe(),
            settings.alignment().refuseOnMismatch(),
            settings.deadAfterFailures());
    // Checks health at once (registers on the first healthy check), not one interval from now.
    ctx.getSelf().tell(Tick.INSTANCE);
    timers.startTimerWithFixedDelay(Tick.INSTANCE, settings.heartbeatInterval());
    timers.startTimerWithFixedDelay(AdapterTick.INSTANCE, settings.adapterRefresh());
  }

  @Override
  public Receive<AgentRequest> createReceive() {
    return newReceiveBuilder()
        .onMessage(GetInfo.class, this::onGetInfo)
        .onMessage(RequestReplay.class, this::onRequestReplay)
        .onMessageEquals(Tick.INSTANCE, this::onTick)
        .onMessage(HealthChecked.class, this::onHealthChecked)
        .onMessage(Scraped.class, this::onScraped)
        .onMessage(Settled.class, this::onSettled)
        .onMessageEquals(EngineRestarted.INSTANCE, this::onEngineRestarted)
        .onMessage(Probed.class, this::onProbed)
        .onMessage(ApisLearned.class, this::onApisLearned)
        .onMessageEquals(AdapterTick.INSTANCE, this::onAdapterTick)
        .onMessage(AdaptersRead.class, this::onAdaptersRead)
        .onMessage(Drain.class, this::onDrain)
        .onSignal(PostStop.class, s -> onPostStop())
        .build();
  }

  private Behavior<AgentRequest> onGetInfo(GetInfo m) {
    m.replyTo().tell(info());
    return this;
  }

  private Behavior<AgentRequest> onRequestReplay(RequestReplay m) {
    m.replyTo().tell(plane.replay(m, settings.maxReplayBatches()));
    return this;
  }

  private Behavior<AgentRequest> onTick() {
    long t = gate.nextTick();
    getContext().pipeToSelf(engine.healthy(), (ok, e) -> new HealthChecked(t, ok != null && ok));
    return this;
  }

  private Behavior<AgentRequest> onHealthChecked(HealthChecked m) {
    if (m.healthy()) {
      getContext()
          .pipeToSelf(
              engine.scrape(
                  spec.info().targetId(), plane.epoch(), spec.dpSize() > 1 ? spec.dpRank() : -1),
              (s, e) -> new Scraped(m.tick(), s));
    }
    ServingGate.Steps steps = gate.checked(m.tick(), m.healthy());
    if (steps.tellHealthLost()) {
      plane.healthLost();
    }
    if (steps.deregister()) {
      getContext()
          .getLog()
          .warn("replica {} failed health checks: deregistering", spec.replicaId());
    }
    take(steps);
    return this;
  }

  private Behavior<AgentRequest> onScraped(Scraped m) {
    if (gate.current(m.tick())) {
      plane.healthy(m.tick(), m.scrape() == null ? Double.NaN : m.scrape().processStartSeconds());
    }
    if (m.scrape() != null && gate.mayPublish()) {
      // The heartbeat also carries the stream's watermark: a tracker that lost the last batches
      // learns of the gap here even when no later batch comes.
      ReplicaLoad load = m.scrape().load();
      loadTopic.tell(Topic.publish(plane.stamp(load)));
    }
    return this;
  }

  private Behavior<AgentRequest> onSettled(Settled m) {
    take(gate.settled(m.tick()));
    return this;
  }

  private Behavior<AgentRequest> onEngineRestarted() {
    take(gate.restarted());
    return this;
  }

  private Behavior<AgentRequest> onProbed(Probed m) {
    AlignmentProbe.Result r = m.result();
    if (m.generation() == gate.probeGeneration()) {
      if (r.outcome() == AlignmentProbe.Outcome.INCONCLUSIVE) {
        getContext()
            .getLog()
            .warn("replica {}: alignment probe inconclusive: {}", spec.replicaId(), r.detail());
      } else if (r.mismatch()) {
        getContext()
            .getLog()
            .error(
                "replica {}: the router's block keys or cache hits do not line up with the engine's;"
                    + " {}: {}",
                spec.replicaId(),
                settings.alignment().refuseOnMismatch()
                    ? "NOT serving it"
                    : "serving it flagged unaligned, by load alone (alignment.on-mismatch = warn)",
                r.detail());
      } else if (!r.detail().isEmpty()) {
        getContext().getLog().warn("replica {}: alignment probe: {}", spec.replicaId(), r.detail());
      }
      probedBlockSize = r.engineBlockSize();
      AlignmentStatus before = alignment;
      alignment = r.status();
      if (gate.registered() && !alignment.equals(before)) {
        announce();
      }
    }
    take(gate.probed(m.generation(), r.mismatch()));
    return this;
  }

  private Behavior<AgentRequest> onApisLearned(ApisLearned m) {
    m.apis().ifPresent(a -> apis = a);
    m.adapters().ifPresent(a -> adapters = a);
    if (m.identity() != null) {
      identity = m.identity();
    }
    take(gate.apisLearned(m.apis().isPresent() && m.adapters().isPresent()));
    return this;
  }

  /**
   * What the agent announces now: the spec with the engine's APIs, adapters, identity (its block
   * size as the probe saw it when the engine's metrics do not say, and the speculative method its
   * cache hits are predicted with) and alignment.
   */
  private ReplicaInfo info() {
    EngineIdentity engine =
        identity.blockSize() > 0 ? identity : identity.withBlockSize(probedBlockSize);
    engine = engine.withSpeculative(settings.alignment().speculative().apply(spec.model()));
    return spec.info(apis, adapters).with(engine, alignment);
  }

  /** Announces the replica's info on {@code kvrouter-replica-info}, if the agent has that topic. */
  private void announce() {
    if (infoTopic != null) {
      infoTopic.tell(Topic.publish(info()));
    }
  }

  private Behavior<AgentRequest> onAdapterTick() {
    if (gate.registered()) {
      getContext()
          .pipeToSelf(
              engine.adapters(),
              (read, e) -> new AdaptersRead(read == null ? Optional.empty() : read));
    }
    return this;
  }

  /**
   * Announces the replica again with the adapters read, changed or not (an ingress that took an
   * older {@link GetInfo} answer after the last announcement is corrected by the next one).
   */
  private Behavior<AgentRequest> onAdaptersRead(AdaptersRead m) {
    if (m.adapters().isEmpty() || !gate.registered()) {
      return this;
    }
    if (!m.adapters().get().equals(adapters)) {
      getContext()
          .getLog()
          .info(
              "replica {} now serves LoRA adapters {} (was {})",
              spec.replicaId(),
              m.adapters().get(),
              adapters);
      adapters = m.adapters().get();
    }
    announce();
    return this;
  }

  private Behavior<AgentRequest> onDrain(Drain m) {
    if (gate.registered()) {
      getContext().getLog().info("replica {} deregistering: the node drains", spec.replicaId());
    }
    take(gate.drain());
    m.replyTo().tell(Done.getInstance());
    return this;
  }

  /** Does what the gate decided. */
  private void take(ServingGate.Steps steps) {
    if (steps.probe()) {
      long generation = gate.probeGeneration();
      getContext()
          .pipeToSelf(
              plane.probe(ThreadLocalRandom.current().nextLong()),
              (r, e) -> new Probed(generation, r));
    }
    if (steps.learnApis()) {
      getContext()
          .pipeToSelf(
              engine
                  .apis()
                  .thenCombine(engine.adapters(), (a, l) -> new ApisLearned(a, l, null))
                  .thenCombine(
                      engine.identity(settings.engine().kind(), settings.engine().hashAlgo()),
                      (l, id) -> new ApisLearned(l.apis(), l.adapters(), id)),
              (learned, e) ->
                  learned == null
                      ? new ApisLearned(Optional.empty(), Optional.empty(), null)
                      : learned);
    }
    if (steps.register()) {
      getContext()
          .getLog()
          .info(
              "replica {} healthy, serving {}{}: registering ({} {}, alignment {})",
              spec.replicaId(),
              apis.isEmpty() ? "OpenAI chat and completions" : "also " + apis,
              adapters.isEmpty() ? "" : ", LoRA adapters " + adapters,
              identity.kind(),
              identity.version(),
              alignment.state().label());
      getContext()
          .getSystem()
          .receptionist()
          .tell(Receptionist.register(SERVICE_KEY, getContext().getSelf()));
    }
    if (steps.deregister()) {
      getContext()
          .getSystem()
          .receptionist()
          .tell(Receptionist.deregister(SERVICE_KEY, getContext().getSelf()));
    }
  }

  private Behavior<AgentRequest> onPostStop() {
    plane.close();
    return this;
  }
}

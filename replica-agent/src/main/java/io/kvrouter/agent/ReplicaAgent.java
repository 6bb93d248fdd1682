package io.kvrouter.agent;

import io.kvrouter.agent.kvevents.KvEventSubscriber;
import io.kvrouter.protocol.AgentRequest;
import io.kvrouter.protocol.GetInfo;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.Replayed;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.RequestReplay;
import io.kvrouter.protocol.SnapshotReply;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
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
 * engine is healthy and has said which APIs it serves ({@link EngineProbe#apis}), answers {@link
 * GetInfo} and {@link RequestReplay}, publishes load heartbeats and deregisters the replica while
 * its engine fails health checks. Ingresses read a replica's info once per registration, so the
 * APIs are learned before each one (an engine replaced by a newer build while it was down is
 * announced with what the new build serves).
 *
 * <p>The event plane itself does not pass through this actor: the replica's {@link
 * KvEventSubscriber} thread feeds a {@link ReplicaEventPipeline} whose {@link BatchSink} tells the
 * {@code kvrouter-kv-events} topic (a thread-safe tell). The actor reads the pipeline's ring and
 * snapshot under its short lock. In approximate mode (no KV-event endpoint) there is no pipeline
 * and nothing is published about blocks.
 */
public final class ReplicaAgent extends AbstractBehavior<AgentRequest> {

  /** Most batches one replay reply carries. */
  static final int MAX_REPLAY_BATCHES = 128;

  /** Every replica agent registers under this key; trackers watch its listing. */
  public static final ServiceKey<AgentRequest> SERVICE_KEY = AgentRequest.SERVICE_KEY;

  /** The agent's own messages (timers, piped results); never cross the wire. */
  private interface Command extends AgentRequest {}

  enum Tick implements Command {
    INSTANCE
  }

  private record HealthChecked(boolean healthy) implements Command {}

  /**
   * The node is draining: deregister the replica for good (health checks no longer register it
   * again) and answer once the receptionist was told.
   */
  public record Drain(ActorRef<Done> replyTo) implements Command {}

  private record LoadScraped(ReplicaLoad load) implements Command {}

  /** The engine's APIs, or empty when it did not answer. */
  private record ApisLearned(Optional<List<String>> apis) implements Command {}

  private final ReplicaSpec spec;
  private final AgentSettings settings;
  private final ActorRef<Topic.Command<ReplicaLoad>> loadTopic;
  private final ReplicaEventPipeline pipeline;
  private final KvEventSubscriber subscriber;
  private final EngineProbe probe;
  private boolean registered;
  private boolean draining;
  private int failures;
  private List<String> apis = List.of();

  /**
   * @param spec the replica
   * @param settings heartbeat, health and replay settings
   * @param eventsTopic topic {@code kvrouter-kv-events}
   * @param loadTopic topic {@code kvrouter-replica-load}
   */
  public static Behavior<AgentRequest> create(
      ReplicaSpec spec,
      AgentSettings settings,
      ActorRef<Topic.Command<KvEventBatch>> eventsTopic,
      ActorRef<Topic.Command<ReplicaLoad>> loadTopic) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers -> new ReplicaAgent(ctx, timers, spec, settings, eventsTopic, loadTopic)));
  }

  private ReplicaAgent(
      ActorContext<AgentRequest> ctx,
      TimerScheduler<AgentRequest> timers,
      ReplicaSpec spec,
      AgentSettings settings,
      ActorRef<Topic.Command<KvEventBatch>> eventsTopic,
      ActorRef<Topic.Command<ReplicaLoad>> loadTopic) {
    super(ctx);
    this.spec = spec;
    this.settings = settings;
    this.loadTopic = loadTopic;
    this.probe = new EngineProbe(spec.baseUrl(), Duration.ofSeconds(2));
    if (spec.kvEvents()) {
      BatchSink sink = b -> eventsTopic.tell(Topic.publish(b));
      this.pipeline =
          new ReplicaEventPipeline(
              spec.info().targetId(),
              settings.keyFunctions().apply(spec.model()),
              spec.blockSize(),
              settings.ringCapacity(),
              sink);
      this.subscriber =
          new KvEventSubscriber(
                  spec.kvEventsEndpoint(),
                  spec.replayEndpoint(),
                  spec.topicFilter(),
                  pipeline,
                  "kv-events-" + spec.info().targetId())
              .start();
    } else {
      this.pipeline = null;
      this.subscriber = null;
    }
    // Registers on the first healthy check (right away, not one interval from now).
    ctx.getSelf().tell(Tick.INSTANCE);
    timers.startTimerWithFixedDelay(Tick.INSTANCE, settings.heartbeatInterval());
  }

  @Override
  public Receive<AgentRequest> createReceive() {
    return newReceiveBuilder()
        .onMessage(GetInfo.class, this::onGetInfo)
        .onMessage(RequestReplay.class, this::onRequestReplay)
        .onMessageEquals(Tick.INSTANCE, this::onTick)
        .onMessage(HealthChecked.class, this::onHealthChecked)
        .onMessage(LoadScraped.class, this::onLoadScraped)
        .onMessage(ApisLearned.class, this::onApisLearned)
        .onMessage(Drain.class, this::onDrain)
        .onSignal(PostStop.class, s -> onPostStop())
        .build();
  }

  private Behavior<AgentRequest> onGetInfo(GetInfo m) {
    m.replyTo().tell(spec.info(apis));
    return this;
  }

  private Behavior<AgentRequest> onRequestReplay(RequestReplay m) {
    if (pipeline == null) {
      m.replyTo().tell(new Replayed(m.replicaId(), m.epoch(), new KvEventBatch[0]));
      return this;
    }
    Optional<List<KvEventBatch>> batches = pipeline.replay(m.epoch(), m.fromSeq());
    if (batches.isPresent()) {
      // A bounded reply keeps each message well under the remoting frame size; a tracker still
      // behind asks again (its next batch or heartbeat shows the remaining gap).
      List<KvEventBatch> first =
          batches.get().subList(0, Math.min(MAX_REPLAY_BATCHES, batches.get().size()));
      m.replyTo().tell(new Replayed(m.replicaId(), m.epoch(), first.toArray(KvEventBatch[]::new)));
    } else {
      m.replyTo().tell(new SnapshotReply(pipeline.snapshot()));
    }
    return this;
  }

  private Behavior<AgentRequest> onTick() {
    getContext().pipeToSelf(probe.healthy(), (ok, e) -> new HealthChecked(ok != null && ok));
    return this;
  }

  private Behavior<AgentRequest> onHealthChecked(HealthChecked m) {
    if (m.healthy()) {
      failures = 0;
      if (!registered && !draining) {
        getContext()
            .pipeToSelf(
                probe.apis(),
                (learned, e) -> new ApisLearned(learned == null ? Optional.empty() : learned));
      }
      long epoch = pipeline == null ? 0 : pipeline.epoch();
      getContext()
          .pipeToSelf(
              probe.load(spec.info().targetId(), epoch), (load, e) -> new LoadScraped(load));
    } else if (++failures >= settings.deadAfterFailures() && registered) {
      getContext()
          .getLog()
          .warn("replica {} failed {} health checks: deregistering", spec.replicaId(), failures);
      deregister();
    }
    return this;
  }

  private Behavior<AgentRequest> onApisLearned(ApisLearned m) {
    if (m.apis().isEmpty() || registered || draining) {
      return this; // no answer: the next healthy check asks again
    }
    apis = m.apis().get();
    getContext()
        .getLog()
        .info(
            "replica {} healthy, serving {}: registering",
            spec.replicaId(),
            apis.isEmpty() ? "OpenAI chat and completions" : "also " + apis);
    register();
    return this;
  }

  private Behavior<AgentRequest> onLoadScraped(LoadScraped m) {
    if (m.load() != null) {
      // The heartbeat also carries the stream's watermark: a tracker that lost the last batches
      // learns of the gap here even when no later batch comes.
      loadTopic.tell(Topic.publish(pipeline == null ? m.load() : pipeline.stamp(m.load())));
    }
    return this;
  }

  private Behavior<AgentRequest> onDrain(Drain m) {
    draining = true;
    if (registered) {
      getContext().getLog().info("replica {} deregistering: the node drains", spec.replicaId());
      deregister();
    }
    m.replyTo().tell(Done.getInstance());
    return this;
  }

  private void deregister() {
    getContext()
        .getSystem()
        .receptionist()
        .tell(Receptionist.deregister(SERVICE_KEY, getContext().getSelf()));
    registered = false;
  }

  private void register() {
    getContext()
        .getSystem()
        .receptionist()
        .tell(Receptionist.register(SERVICE_KEY, getContext().getSelf()));
    registered = true;
  }

  private Behavior<AgentRequest> onPostStop() {
    if (subscriber != null) {
      subscriber.close();
    }
    return this;
  }
}

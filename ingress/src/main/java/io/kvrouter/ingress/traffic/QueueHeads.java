package io.kvrouter.ingress.traffic;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.actor.typed.pubsub.Topic;

/**
 * Tells the other ingresses what this ingress's router queue holds ({@link QueueHead}, on the
 * {@value #TOPIC} topic), and records what they tell into {@link PeerQueues}. One per ingress node.
 *
 * <p>When what waits for a model changes (its most pressing priority or the tenants at it) it is
 * told at once: the others decide their turns by it. A change of running counts alone (every
 * placement and release) is told at most once per {@code coalesce}, and only while some ingress
 * waits for the model (nobody reads the counts otherwise); when a peer starts waiting, this
 * ingress's counts go out at once. Everything still relevant is told again every {@code refresh},
 * within the peers' TTL.
 */
public final class QueueHeads extends AbstractBehavior<QueueHeads.Command> {

  /** The cluster pub-sub topic of queue heads. */
  public static final String TOPIC = "kvrouter-queue-heads";

  /** The actor's messages. */
  public sealed interface Command permits LocalHead, Heard, Refresh, Flush {}

  /** This ingress's queue now holds {@code state} for its model. */
  public record LocalHead(QueueState state) implements Command {}

  private record Heard(QueueHead head) implements Command {}

  private enum Refresh implements Command {
    INSTANCE
  }

  private enum Flush implements Command {
    INSTANCE
  }

  private final String self;
  private final PeerQueues peers;
  private final TimerScheduler<Command> timers;
  private final Duration coalesce;
  private final ActorRef<Topic.Command<QueueHead>> topic;

  /** The local queue's latest state per model (idle ones absent). */
  private final Map<String, QueueState> latest = new HashMap<>();

  /** What the peers were last told per model (idle ones absent). */
  private final Map<String, QueueState> told = new HashMap<>();

  /** Models whose running counts changed since they were last told. */
  private final Set<String> dirty = new HashSet<>();

  private QueueHeads(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      String self,
      PeerQueues peers,
      Duration coalesce) {
    super(ctx);
    this.self = self;
    this.peers = peers;
    this.timers = timers;
    this.coalesce = coalesce;
    this.topic = ctx.spawn(Topic.create(QueueHead.class, TOPIC), "queue-heads-topic");
    topic.tell(Topic.subscribe(ctx.messageAdapter(QueueHead.class, Heard::new)));
  }

  /**
   * @param self this ingress's id
   * @param refresh how often the relevant states are told again (well within the peers' TTL)
   * @param coalesce the least time between two tellings of running counts alone
   */
  public static Behavior<Command> create(
      String self, PeerQueues peers, Duration refresh, Duration coalesce) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers -> {
                  timers.startTimerWithFixedDelay(Refresh.INSTANCE, refresh);
                  return new QueueHeads(ctx, timers, self, peers, coalesce);
                }));
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(LocalHead.class, this::onLocalHead)
        .onMessage(Heard.class, this::onHeard)
        .onMessageEquals(Refresh.INSTANCE, this::onRefresh)
        .onMessageEquals(Flush.INSTANCE, this::onFlush)
        .build();
  }

  private Behavior<Command> onLocalHead(LocalHead m) {
    QueueState s = m.state();
    String model = s.model();
    if (s.isIdle()) {
      latest.remove(model);
    } else {
      latest.put(model, s);
    }
    QueueState before = told.getOrDefault(model, QueueState.idle(model));
    if (!Objects.equals(before.priority(), s.priority()) || !before.waiting().equals(s.waiting())) {
      tell(s);
    } else if (!before.running().equals(s.running())) {
      dirty.add(model);
      if (!timers.isTimerActive(Flush.INSTANCE)) {
        timers.startSingleTimer(Flush.INSTANCE, coalesce);
      }
    } else {
      dirty.remove(model);
    }
    return this;
  }

  private Behavior<Command> onFlush() {
    for (String model : dirty) {
      QueueState s = latest.getOrDefault(model, QueueState.idle(model));
      if (relevant(s)) {
        publish(s);
      }
    }
    dirty.clear();
    return this;
  }

  private Behavior<Command> onRefresh() {
    latest.values().stream().filter(this::relevant).toList().forEach(this::tell);
    return this;
  }

  private Behavior<Command> onHeard(Heard m) {
    QueueHead head = m.head();
    if (head.ingress().equals(self)) {
      return this;
    }
    if (peers.heard(head, System.nanoTime()) && latest.containsKey(head.model())) {
      // A peer started waiting: it needs this ingress's counts now, not at the next change.
      tell(latest.get(head.model()));
    }
    return this;
  }

  /** True while some ingress, this one included, waits for the state's model. */
  private boolean relevant(QueueState s) {
    return s.priority() != null || peers.waiting(s.model(), System.nanoTime());
  }

  private void tell(QueueState s) {
    publish(s);
    dirty.remove(s.model());
  }

  private void publish(QueueState s) {
    if (s.isIdle()) {
      told.remove(s.model());
    } else {
      told.put(s.model(), s);
    }
    topic.tell(Topic.publish(QueueHead.of(self, s)));
  }
}

package io.kvrouter.ingress.traffic;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.pubsub.Topic;

/**
 * Tells the other ingresses what this ingress's router queue waits with ({@link QueueHead}, on the
 * {@value #TOPIC} topic) when it changes and every {@code refresh}, and records what they tell into
 * {@link PeerQueues}. One per ingress node.
 */
public final class QueueHeads extends AbstractBehavior<QueueHeads.Command> {

  /** The cluster pub-sub topic of queue heads. */
  public static final String TOPIC = "kvrouter-queue-heads";

  /** The actor's messages. */
  public sealed interface Command permits LocalHead, Heard, Refresh {}

  /** This ingress's queue now waits for {@code model} with {@code priority} (null: nothing). */
  public record LocalHead(String model, Integer priority) implements Command {}

  private record Heard(QueueHead head) implements Command {}

  private enum Refresh implements Command {
    INSTANCE
  }

  private final String self;
  private final PeerQueues peers;
  private final ActorRef<Topic.Command<QueueHead>> topic;
  private final Map<String, Integer> local = new HashMap<>();

  private QueueHeads(ActorContext<Command> ctx, String self, PeerQueues peers) {
    super(ctx);
    this.self = self;
    this.peers = peers;
    this.topic = ctx.spawn(Topic.create(QueueHead.class, TOPIC), "queue-heads-topic");
    topic.tell(Topic.subscribe(ctx.messageAdapter(QueueHead.class, Heard::new)));
  }

  /**
   * @param self this ingress's id
   * @param refresh how often the current heads are published again (well within the peers' TTL)
   */
  public static Behavior<Command> create(String self, PeerQueues peers, Duration refresh) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers -> {
                  timers.startTimerWithFixedDelay(Refresh.INSTANCE, refresh);
                  return new QueueHeads(ctx, self, peers);
                }));
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(LocalHead.class, this::onLocalHead)
        .onMessage(Heard.class, this::onHeard)
        .onMessageEquals(Refresh.INSTANCE, this::onRefresh)
        .build();
  }

  private Behavior<Command> onLocalHead(LocalHead m) {
    if (m.priority() == null) {
      local.remove(m.model());
    } else {
      local.put(m.model(), m.priority());
    }
    topic.tell(Topic.publish(new QueueHead(self, m.model(), m.priority())));
    return this;
  }

  private Behavior<Command> onRefresh() {
    local.forEach((model, p) -> topic.tell(Topic.publish(new QueueHead(self, model, p))));
    return this;
  }

  private Behavior<Command> onHeard(Heard m) {
    if (!m.head().ingress().equals(self)) {
      peers.heard(m.head(), System.nanoTime());
    }
    return this;
  }
}

package io.kvrouter.ingress.node;

import io.kvrouter.config.management.NodeReadiness;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * The one owner of an ingress node's readiness: the node may take traffic when every {@link
 * Component} has reported ready and the node is not draining. The components tell it about changes
 * ({@link Report}); {@code GET /ready} asks it ({@link Get}); an actor that needs to follow it
 * subscribes ({@link Subscribe}) and is told the new {@link Status} on every change. {@link Drain}
 * (for a shutdown: a SIGTERM's {@code CoordinatedShutdown}) makes the node not ready for good, so a
 * load balancer stops sending before the port closes; a readiness check (Pekko Management's, for
 * one) asks {@link Get} the same way {@code /ready} does. Spawned by {@link IngressGuardian} as
 * {@code readiness}, which {@link #register}s it as the ingress role's part of the node's
 * readiness.
 */
public final class IngressReadiness extends AbstractBehavior<IngressReadiness.Command> {

  /** What must be ready before the node may route. */
  public enum Component {
    /** The HTTP front is bound. */
    HTTP,
    /** Every known replica is bootstrapped, no replay is pending, and some replica serves. */
    REPLICAS,
    /** Every listed peer ingress has been heard from and no reservation replay is pending. */
    PEERS
  }

  /** What readiness understands. */
  public sealed interface Command permits Report, Get, Subscribe, Drain {}

  /** A component's readiness changed (repeating the current value is harmless). */
  public record Report(Component component, boolean ready) implements Command {}

  /** Replies with the current {@link Status}. */
  public record Get(ActorRef<Status> replyTo) implements Command {}

  /** {@code subscriber} is told the current {@link Status} now and again on every change. */
  public record Subscribe(ActorRef<Status> subscriber) implements Command {}

  /** The node is shutting down: not ready from now on, whatever the components say. */
  public enum Drain implements Command {
    INSTANCE
  }

  /**
   * The node's readiness.
   *
   * @param ready true when no component is pending and the node is not draining
   * @param draining true once {@link Drain} arrived
   * @param pending the components not ready yet
   */
  public record Status(boolean ready, boolean draining, Set<Component> pending) {
    public Status {
      pending = Set.copyOf(pending);
    }
  }

  private final EnumSet<Component> pending = EnumSet.allOf(Component.class);
  private final List<ActorRef<Status>> subscribers = new ArrayList<>();
  private boolean draining;

  private IngressReadiness(ActorContext<Command> context) {
    super(context);
  }

  /** Not ready until every component has reported ready. */
  public static Behavior<Command> create() {
    return Behaviors.setup(IngressReadiness::new);
  }

  /**
   * Wires {@code readiness} into the node's: it becomes the ingress role's query in {@link
   * NodeReadiness}, which Pekko Management's {@code /ready} asks, and the node's drain (the first
   * coordinated-shutdown step) reaches it as {@link Drain}, so the ingress's own {@code GET /ready}
   * turns false at the same moment.
   */
  static void register(ActorSystem<?> system, ActorRef<Command> readiness, Duration askTimeout) {
    NodeReadiness node = NodeReadiness.get(system);
    node.register(
        () ->
            AskPattern.<Command, Status>ask(readiness, Get::new, askTimeout, system.scheduler())
                .thenApply(Status::ready));
    node.onDrain(() -> readiness.tell(Drain.INSTANCE));
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Report.class, this::onReport)
        .onMessage(Get.class, this::onGet)
        .onMessage(Subscribe.class, this::onSubscribe)
        .onMessageEquals(Drain.INSTANCE, this::onDrain)
        .build();
  }

  private Behavior<Command> onReport(Report m) {
    boolean changed = m.ready() ? pending.remove(m.component()) : pending.add(m.component());
    if (changed) {
      publish();
    }
    return this;
  }

  private Behavior<Command> onGet(Get m) {
    m.replyTo().tell(status());
    return this;
  }

  private Behavior<Command> onSubscribe(Subscribe m) {
    subscribers.add(m.subscriber());
    m.subscriber().tell(status());
    return this;
  }

  private Behavior<Command> onDrain() {
    if (!draining) {
      draining = true;
      getContext().getLog().info("ingress draining: not ready from now on");
      publish();
    }
    return this;
  }

  private Status status() {
    return new Status(!draining && pending.isEmpty(), draining, pending);
  }

  private void publish() {
    Status now = status();
    subscribers.forEach(s -> s.tell(now));
  }
}

package io.kvrouter.ingress.traffic;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Scheduler;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.cluster.ddata.Key;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.LWWMapKey;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;

/**
 * Session bindings shared by every ingress: which replica each session is bound to, in Pekko
 * Distributed Data {@link LWWMap}s (last writer wins per session), spread over {@code shards} keys
 * ({@code kvr-sessions-<n>}) so no single map grows past what gossip carries comfortably. A lookup
 * reads this node's replica; a new or moved binding is written to the other ingresses ({@code write
 * = all} by default, without making the request wait), a binding in use is rewritten when older
 * than {@code refresh-after}, and one unused for the TTL is removed by the periodic prune (and
 * ignored before that).
 *
 * <p><b>Why Distributed Data and not the reservation plane.</b> Reservations could carry a session
 * key, and peers would learn bindings in the same ordered stream. But bindings live much longer
 * than reservations (minutes of a conversation against seconds of a request) and need their own
 * expiry, they change rarely (a new session or a move, not every request), and a lost or late
 * binding costs one cache miss, never a wrong answer: a convergent map with a TTL fits, while the
 * reservation plane's wire format (pinned for rolling upgrades) and its per-request path stay as
 * they are. Two ingresses binding a new session at the same moment converge on the later write.
 *
 * <p>One instance per ingress node, over a replicator shared by the ingress nodes only.
 */
public final class SessionDirectory extends AbstractBehavior<SessionDirectory.Command> {

  /** The directory's messages. */
  public sealed interface Command permits Lookup, Bind, Prune, LookedUp, Written {}

  /** Replies with {@code session}'s live binding. */
  public record Lookup(String session, ActorRef<Found> replyTo) implements Command {}

  /** The answer to a {@link Lookup}: the binding, or null. */
  public record Found(SessionBinding binding) {}

  /** Binds {@code session} to {@code replica} now. */
  public record Bind(String session, String replica) implements Command {}

  /** Time to remove expired bindings. */
  enum Prune implements Command {
    INSTANCE
  }

  private record LookedUp(
      String session,
      Replicator.GetResponse<LWWMap<String, SessionBinding>> response,
      ActorRef<Found> replyTo)
      implements Command {}

  private record Written(Replicator.UpdateResponse<LWWMap<String, SessionBinding>> response)
      implements Command {}

  private final ReplicatorMessageAdapter<Command, LWWMap<String, SessionBinding>> replicator;
  private final SelfUniqueAddress self;
  private final TrafficSettings.Sessions settings;
  private final LongSupplier clock;

  private SessionDirectory(
      ActorContext<Command> context,
      ActorRef<Replicator.Command> replicator,
      SelfUniqueAddress self,
      TrafficSettings.Sessions settings,
      LongSupplier clock) {
    super(context);
    this.replicator =
        new ReplicatorMessageAdapter<>(
            context, replicator, settings.writeTimeout().multipliedBy(2));
    this.self = self;
    this.settings = settings;
    this.clock = clock;
  }

  /**
   * @param replicator a Distributed Data replicator shared by the ingress nodes only
   * @param self this node's address as Distributed Data knows it
   * @param clock wall-clock milliseconds (bindings expire by it on every ingress)
   */
  public static Behavior<Command> create(
      ActorRef<Replicator.Command> replicator,
      SelfUniqueAddress self,
      TrafficSettings.Sessions settings,
      LongSupplier clock) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers -> {
                  timers.startTimerWithFixedDelay(Prune.INSTANCE, settings.pruneInterval());
                  return new SessionDirectory(ctx, replicator, self, settings, clock);
                }));
  }

  /** The {@link SessionStore} over {@code directory}; a lookup not answered in time finds none. */
  public static SessionStore asStore(
      ActorRef<Command> directory, Scheduler scheduler, Duration lookupTimeout) {
    return new SessionStore() {
      @Override
      public CompletionStage<SessionBinding> lookup(String session) {
        CompletionStage<Found> found =
            AskPattern.ask(
                directory, replyTo -> new Lookup(session, replyTo), lookupTimeout, scheduler);
        return found.thenApply(Found::binding).exceptionally(e -> null);
      }

      @Override
      public void bind(String session, String replica) {
        directory.tell(new Bind(session, replica));
      }
    };
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Lookup.class, this::onLookup)
        .onMessage(LookedUp.class, this::onLookedUp)
        .onMessage(Bind.class, this::onBind)
        .onMessageEquals(Prune.INSTANCE, this::onPrune)
        .onMessage(Written.class, m -> this)
        .build();
  }

  private Behavior<Command> onLookup(Lookup m) {
    replicator.askGet(
        replyTo -> new Replicator.Get<>(shard(m.session()), Replicator.readLocal(), replyTo),
        response -> new LookedUp(m.session(), response, m.replyTo()));
    return this;
  }

  private Behavior<Command> onLookedUp(LookedUp m) {
    SessionBinding binding = null;
    if (m.response() instanceof Replicator.GetSuccess<LWWMap<String, SessionBinding>> ok) {
      scala.Option<SessionBinding> found = ok.dataValue().get(m.session());
      if (found.isDefined() && !expired(found.get(), clock.getAsLong())) {
        binding = found.get();
      }
    }
    m.replyTo().tell(new Found(binding));
    return this;
  }

  private Behavior<Command> onBind(Bind m) {
    SessionBinding binding = new SessionBinding(m.replica(), clock.getAsLong());
    replicator.askUpdate(
        replyTo ->
            new Replicator.Update<>(
                shard(m.session()),
                LWWMap.create(),
                writeConsistency(),
                replyTo,
                map -> map.put(self, m.session(), binding)),
        Written::new);
    return this;
  }

  private Behavior<Command> onPrune() {
    long now = clock.getAsLong();
    for (int i = 0; i < settings.shards(); i++) {
      Key<LWWMap<String, SessionBinding>> key = shardKey(i);
      replicator.askUpdate(
          replyTo ->
              new Replicator.Update<>(
                  key,
                  LWWMap.create(),
                  Replicator.writeLocal(),
                  replyTo,
                  map -> withoutExpired(map, now)),
          Written::new);
    }
    return this;
  }

  private LWWMap<String, SessionBinding> withoutExpired(
      LWWMap<String, SessionBinding> map, long now) {
    LWWMap<String, SessionBinding> out = map;
    for (Map.Entry<String, SessionBinding> e : map.getEntries().entrySet()) {
      if (expired(e.getValue(), now)) {
        out = out.remove(self, e.getKey());
      }
    }
    return out;
  }

  private boolean expired(SessionBinding b, long now) {
    return now - b.touchedMillis() > settings.ttl().toMillis();
  }

  private Key<LWWMap<String, SessionBinding>> shard(String session) {
    // String.hashCode is specified by the JLS: every ingress maps a session to the same shard.
    return shardKey(Math.floorMod(session.hashCode(), settings.shards()));
  }

  private static Key<LWWMap<String, SessionBinding>> shardKey(int shard) {
    return LWWMapKey.create("kvr-sessions-" + shard);
  }

  private Replicator.WriteConsistency writeConsistency() {
    return Consistency.write(settings.write(), settings.writeTimeout());
  }
}

package io.kvrouter.ingress.traffic;

import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
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
import org.apache.pekko.cluster.ddata.PNCounterMap;
import org.apache.pekko.cluster.ddata.PNCounterMapKey;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;

/**
 * Per-tenant request and token counts that hold across every ingress, in Pekko Distributed Data:
 * one {@link PNCounterMap} per tenant (key {@code kvr-usage-<tenant>}) with a counter per window
 * and kind ({@code r<window>} requests, {@code t<window>} tokens), the windows before the previous
 * one removed as it writes. A CRDT counter converges without coordination; what makes the limit
 * hold is how it is used: each round of a tenant reads this node's replica, judges the waiting
 * requests ({@link UsageJudge}), and counts the admitted ones with a write that reaches the other
 * ingresses before they are let through ({@code write = all} by default; {@code majority} tolerates
 * a lost ingress, {@code local} only gossips). An ingress that asks next thus sees them. Rounds of
 * one tenant run one after the other; requests arriving meanwhile are judged together in the next.
 *
 * <p>Failures allow: a write that times out (an unreachable ingress) still counts locally and
 * gossips later, and its requests proceed. One instance per ingress node; the replicator it uses
 * replicates among ingress nodes only.
 */
public final class TenantLimiter extends AbstractBehavior<TenantLimiter.Command> {

  /** The limiter's messages. */
  public sealed interface Command permits Acquire, GotUsage, Written, PeersCounted, CountPeers {}

  /** Counts one request of {@code tokens} tokens for {@code tenant} if it fits. */
  public record Acquire(Tenant tenant, long tokens, ActorRef<LimitVerdict> replyTo)
      implements Command {}

  private record GotUsage(String tenant, Replicator.GetResponse<PNCounterMap<String>> response)
      implements Command {}

  private record Written(
      String tenant,
      Replicator.UpdateResponse<PNCounterMap<String>> response,
      List<Acquire> admitted,
      List<LimitVerdict> verdicts)
      implements Command {}

  private record PeersCounted(int count) implements Command {}

  private enum CountPeers implements Command {
    INSTANCE
  }

  /** A tenant's requests waiting for a round, and whether one is under way. */
  private static final class Rounds {
    final ArrayDeque<Acquire> waiting = new ArrayDeque<>();
    boolean running;
  }

  /** Limits are per minute: counted per minute, estimated over the last minute. */
  static final Duration WINDOW = Duration.ofMinutes(1);

  private final ReplicatorMessageAdapter<Command, PNCounterMap<String>> replicator;
  private final SelfUniqueAddress self;
  private final TrafficSettings.Limits settings;
  private final LongSupplier clock;
  private final TrafficMetrics metrics;
  private final Map<String, Rounds> rounds = new HashMap<>();
  private int peers = 1;

  private TenantLimiter(
      ActorContext<Command> context,
      ActorRef<Replicator.Command> replicator,
      SelfUniqueAddress self,
      TrafficSettings.Limits settings,
      LongSupplier clock,
      TrafficMetrics metrics) {
    super(context);
    this.replicator =
        new ReplicatorMessageAdapter<>(
            context, replicator, settings.writeTimeout().multipliedBy(2));
    this.self = self;
    this.settings = settings;
    this.clock = clock;
    this.metrics = metrics;
  }

  /**
   * @param replicator a Distributed Data replicator shared by the ingress nodes only
   * @param self this node's address as Distributed Data knows it
   * @param clock wall-clock milliseconds (windows are wall-clock minutes on every ingress)
   */
  public static Behavior<Command> create(
      ActorRef<Replicator.Command> replicator,
      SelfUniqueAddress self,
      TrafficSettings.Limits settings,
      LongSupplier clock,
      TrafficMetrics metrics) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers -> {
                  timers.startTimerWithFixedDelay(
                      CountPeers.INSTANCE, Duration.ZERO, settings.peersInterval());
                  return new TenantLimiter(ctx, replicator, self, settings, clock, metrics);
                }));
  }

  /** The {@link UsageLimiter} that asks {@code limiter}; an unanswered ask allows the request. */
  public static UsageLimiter asLimiter(
      ActorRef<Command> limiter, Scheduler scheduler, Duration askTimeout) {
    return (tenant, tokens) -> {
      if (!tenant.limited()) {
        return java.util.concurrent.CompletableFuture.completedFuture(
            LimitVerdict.unlimited(tenant.id()));
      }
      CompletionStage<LimitVerdict> asked =
          AskPattern.ask(
              limiter, replyTo -> new Acquire(tenant, tokens, replyTo), askTimeout, scheduler);
      return asked.exceptionally(e -> LimitVerdict.unlimited(tenant.id()));
    };
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Acquire.class, this::onAcquire)
        .onMessage(GotUsage.class, this::onGotUsage)
        .onMessage(Written.class, this::onWritten)
        .onMessage(PeersCounted.class, this::onPeersCounted)
        .onMessageEquals(CountPeers.INSTANCE, this::onCountPeers)
        .build();
  }

  private Behavior<Command> onAcquire(Acquire m) {
    Rounds r = rounds.computeIfAbsent(m.tenant().id(), t -> new Rounds());
    r.waiting.addLast(m);
    if (!r.running) {
      startRound(m.tenant().id(), r);
    }
    return this;
  }

  private void startRound(String tenant, Rounds r) {
    r.running = true;
    Key<PNCounterMap<String>> key = key(tenant);
    replicator.askGet(
        replyTo -> new Replicator.Get<>(key, Replicator.readLocal(), replyTo),
        response -> new GotUsage(tenant, response));
  }

  private Behavior<Command> onGotUsage(GotUsage m) {
    Rounds r = rounds.get(m.tenant());
    PNCounterMap<String> usage =
        m.response() instanceof Replicator.GetSuccess<PNCounterMap<String>> ok
            ? ok.dataValue()
            : PNCounterMap.create();
    long now = clock.getAsLong();
    long windowMillis = WINDOW.toMillis();
    long window = now / windowMillis;
    List<Long> tokens = new ArrayList<>(r.waiting.size());
    r.waiting.forEach(a -> tokens.add(a.tokens()));
    Tenant limits = r.waiting.peekLast().tenant(); // the newest limits, should they have changed
    Map<String, BigInteger> counters = usage.getEntries();
    UsageJudge.Round round =
        UsageJudge.judge(
            limits,
            new UsageJudge.Counts(
                count(counters, "r", window),
                count(counters, "r", window - 1),
                count(counters, "t", window),
                count(counters, "t", window - 1)),
            now % windowMillis,
            windowMillis,
            peers,
            tokens);
    List<Acquire> admitted = new ArrayList<>();
    List<LimitVerdict> allowed = new ArrayList<>();
    for (LimitVerdict v : round.verdicts()) {
      Acquire a = r.waiting.pollFirst();
      if (v.allowed()) {
        admitted.add(a);
        allowed.add(v);
      } else {
        metrics.rateLimited(v.tenant(), v.exceeded());
        a.replyTo().tell(v);
      }
    }
    if (admitted.isEmpty()) {
      finishRound(m.tenant(), r);
      return this;
    }
    long requests = round.admittedRequests();
    long used = round.admittedTokens();
    replicator.askUpdate(
        replyTo ->
            new Replicator.Update<>(
                key(m.tenant()),
                PNCounterMap.create(),
                writeConsistency(),
                replyTo,
                map -> count(map, window, requests, used)),
        response -> new Written(m.tenant(), response, admitted, allowed));
    return this;
  }

  /** Adds a round's counts to the current window and drops the windows before the previous one. */
  private PNCounterMap<String> count(
      PNCounterMap<String> map, long window, long requests, long tokens) {
    PNCounterMap<String> out = map.incrementBy("r" + window, requests, self);
    if (tokens > 0) {
      out = out.incrementBy("t" + window, tokens, self);
    }
    for (String k : map.getEntries().keySet()) {
      if (Long.parseLong(k.substring(1)) < window - 1) {
        out = out.remove(k, self);
      }
    }
    return out;
  }

  private Behavior<Command> onWritten(Written m) {
    if (!(m.response() instanceof Replicator.UpdateSuccess)) {
      // Counted here and gossiped later; the requests go ahead (see the class comment).
      metrics.limitWriteUnconfirmed();
    }
    for (int i = 0; i < m.admitted().size(); i++) {
      m.admitted().get(i).replyTo().tell(m.verdicts().get(i));
    }
    finishRound(m.tenant(), rounds.get(m.tenant()));
    return this;
  }

  private void finishRound(String tenant, Rounds r) {
    r.running = false;
    if (r.waiting.isEmpty()) {
      rounds.remove(tenant);
    } else {
      startRound(tenant, r);
    }
  }

  private Behavior<Command> onCountPeers() {
    replicator.askReplicaCount(
        Replicator.GetReplicaCount::new, count -> new PeersCounted(count.n()));
    return this;
  }

  private Behavior<Command> onPeersCounted(PeersCounted m) {
    peers = Math.max(1, m.count());
    return this;
  }

  private Replicator.WriteConsistency writeConsistency() {
    return Consistency.write(settings.write(), settings.writeTimeout());
  }

  private static long count(Map<String, BigInteger> counters, String kind, long window) {
    BigInteger v = counters.get(kind + window);
    return v == null ? 0 : v.longValue();
  }

  static Key<PNCounterMap<String>> key(String tenant) {
    return PNCounterMapKey.create("kvr-usage-" + tenant);
  }
}

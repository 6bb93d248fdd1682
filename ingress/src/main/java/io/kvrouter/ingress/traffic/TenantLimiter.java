package io.kvrouter.ingress.traffic;

import io.kvrouter.protocol.TenantQuotaCommand;
import io.kvrouter.protocol.TenantQuotaCommand.Acquire;
import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.cluster.ddata.Key;
import org.apache.pekko.cluster.ddata.PNCounterMap;
import org.apache.pekko.cluster.ddata.PNCounterMapKey;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;

/**
 * The owner of one tenant's limits: a Cluster Sharding entity (one per limited tenant, hosted by
 * one ingress) that decides every admission of the tenant in sequence, whichever ingress the
 * request reached. Requests arriving while a round is under way are judged together in the next
 * ({@link UsageJudge}); each round reads the counts on this node, which include every earlier
 * round's, so the limit holds for the cluster exactly, however the requests are spread over the
 * ingresses and however they race.
 *
 * <p><b>Why one owner.</b> Counts judged by every ingress on its own replica of a CRDT counter,
 * each write reaching the others before its requests proceed, cannot hold a limit under a
 * simultaneous burst: while one ingress's round is being written, another may run several rounds on
 * counts that lack it, each admitting what it believes is left. A single sequenced decision cannot
 * overshoot. The price is one hop to the owner for requests reaching another ingress, in place of a
 * replicated write every round would wait for.
 *
 * <p>The counts are a Pekko Distributed Data {@link PNCounterMap} per tenant (key {@code
 * kvr-usage-<tenant>}) with a counter per window and kind ({@code r<window>} requests, {@code
 * t<window>} tokens), the windows before the previous one removed as it writes, so a tenant's owner
 * that moves to another ingress (one left or joined) carries on from the counts replicated there:
 * all of them with {@code limits.write = all}, all but the last gossip interval's with {@code
 * local}. Failures allow: a write that is not confirmed still counts here, and a request whose
 * owner does not answer within {@code ask-timeout} proceeds unchecked.
 */
public final class TenantLimiter extends AbstractBehavior<TenantQuotaCommand> {

  /** The owners' sharded entity type; the entity id is the tenant's name. */
  public static final EntityTypeKey<TenantQuotaCommand> TYPE_KEY =
      EntityTypeKey.create(TenantQuotaCommand.class, "kvr-tenant-quota");

  private record GotUsage(Replicator.GetResponse<PNCounterMap<String>> response)
      implements TenantQuotaCommand {}

  private record Written(
      Replicator.UpdateResponse<PNCounterMap<String>> response,
      List<Acquire> admitted,
      List<LimitVerdict> verdicts)
      implements TenantQuotaCommand {}

  private final String tenant;
  private final ReplicatorMessageAdapter<TenantQuotaCommand, PNCounterMap<String>> replicator;
  private final SelfUniqueAddress self;
  private final TrafficSettings.Limits settings;
  private final LongSupplier clock;
  private final TrafficMetrics metrics;
  private final ArrayDeque<Acquire> waiting = new ArrayDeque<>();
  private boolean running;

  private TenantLimiter(
      ActorContext<TenantQuotaCommand> context,
      String tenant,
      ActorRef<Replicator.Command> replicator,
      SelfUniqueAddress self,
      TrafficSettings.Limits settings,
      LongSupplier clock,
      TrafficMetrics metrics) {
    super(context);
    this.tenant = tenant;
    this.replicator =
        new ReplicatorMessageAdapter<>(
            context, replicator, settings.writeTimeout().multipliedBy(2));
    this.self = self;
    this.settings = settings;
    this.clock = clock;
    this.metrics = metrics;
  }

  /**
   * @param tenant the tenant whose limits this entity owns
   * @param replicator a Distributed Data replicator shared by the ingress nodes only
   * @param self this node's address as Distributed Data knows it
   * @param clock wall-clock milliseconds (windows are wall-clock minutes on every ingress)
   */
  public static Behavior<TenantQuotaCommand> create(
      String tenant,
      ActorRef<Replicator.Command> replicator,
      SelfUniqueAddress self,
      TrafficSettings.Limits settings,
      LongSupplier clock,
      TrafficMetrics metrics) {
    return Behaviors.setup(
        ctx -> new TenantLimiter(ctx, tenant, replicator, self, settings, clock, metrics));
  }

  /**
   * The {@link UsageLimiter} that asks each tenant's owner; a tenant without limits is not asked,
   * and an unanswered ask allows the request.
   */
  public static UsageLimiter asLimiter(ClusterSharding sharding, Duration askTimeout) {
    return (tenant, tokens) -> {
      if (!tenant.limited()) {
        return CompletableFuture.completedFuture(LimitVerdict.unlimited(tenant.id()));
      }
      CompletionStage<TenantQuotaCommand.Verdict> asked =
          sharding
              .entityRefFor(TYPE_KEY, tenant.id())
              .ask(
                  replyTo ->
                      new Acquire(
                          tenant.id(),
                          tenant.requestsPerMinute(),
                          tenant.tokensPerMinute(),
                          tokens,
                          replyTo),
                  askTimeout);
      return asked
          .thenApply(v -> LimitVerdict.fromWire(tenant.id(), tokens, v))
          .exceptionally(e -> LimitVerdict.unlimited(tenant.id()));
    };
  }

  @Override
  public Receive<TenantQuotaCommand> createReceive() {
    return newReceiveBuilder()
        .onMessage(Acquire.class, this::onAcquire)
        .onMessage(GotUsage.class, this::onGotUsage)
        .onMessage(Written.class, this::onWritten)
        .build();
  }

  private Behavior<TenantQuotaCommand> onAcquire(Acquire m) {
    waiting.addLast(m);
    if (!running) {
      startRound();
    }
    return this;
  }

  private void startRound() {
    running = true;
    replicator.askGet(
        replyTo -> new Replicator.Get<>(key(tenant), Replicator.readLocal(), replyTo),
        GotUsage::new);
  }

  private Behavior<TenantQuotaCommand> onGotUsage(GotUsage m) {
    PNCounterMap<String> usage =
        m.response() instanceof Replicator.GetSuccess<PNCounterMap<String>> ok
            ? ok.dataValue()
            : PNCounterMap.create();
    long now = clock.getAsLong();
    long windowMillis = UsageJudge.WINDOW_MILLIS;
    long window = now / windowMillis;
    List<Long> tokens = new ArrayList<>(waiting.size());
    waiting.forEach(a -> tokens.add(a.tokens()));
    Acquire newest = waiting.peekLast(); // the newest limits, should they have changed
    Tenant limits =
        new Tenant(tenant, newest.requestsPerMinute(), newest.tokensPerMinute(), 1, null);
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
            tokens);
    List<Acquire> admitted = new ArrayList<>();
    List<LimitVerdict> allowed = new ArrayList<>();
    for (LimitVerdict v : round.verdicts()) {
      Acquire a = waiting.pollFirst();
      if (v.allowed()) {
        admitted.add(a);
        allowed.add(v);
      } else {
        a.replyTo().tell(v.toWire());
      }
    }
    if (admitted.isEmpty()) {
      finishRound();
      return this;
    }
    long requests = round.admittedRequests();
    long used = round.admittedTokens();
    replicator.askUpdate(
        replyTo ->
            new Replicator.Update<>(
                key(tenant),
                PNCounterMap.create(),
                Consistency.write(settings.write(), settings.writeTimeout()),
                replyTo,
                map -> count(map, window, requests, used)),
        response -> new Written(response, admitted, allowed));
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

  private Behavior<TenantQuotaCommand> onWritten(Written m) {
    if (!(m.response() instanceof Replicator.UpdateSuccess)) {
      // Counted here and replicated later; the requests go ahead (see the class comment).
      metrics.limitWriteUnconfirmed();
    }
    for (int i = 0; i < m.admitted().size(); i++) {
      m.admitted().get(i).replyTo().tell(m.verdicts().get(i).toWire());
    }
    finishRound();
    return this;
  }

  private void finishRound() {
    running = false;
    if (!waiting.isEmpty()) {
      startRound();
    }
  }

  private static long count(Map<String, BigInteger> counters, String kind, long window) {
    BigInteger v = counters.get(kind + window);
    return v == null ? 0 : v.longValue();
  }

  static Key<PNCounterMap<String>> key(String tenant) {
    return PNCounterMapKey.create("kvr-usage-" + tenant);
  }
}

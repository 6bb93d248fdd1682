package io.kvrouter.loadtest.lab;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.routing.ReplicaQuery;
import io.kvrouter.ingress.routing.RouteOutcome;
import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.routing.Target;
import io.kvrouter.ingress.traffic.ProgramHold;
import io.kvrouter.ingress.traffic.SessionBinding;
import io.kvrouter.ingress.traffic.SessionRouter;
import io.kvrouter.ingress.traffic.SessionStore;
import io.kvrouter.ingress.traffic.TrafficMetrics;
import io.kvrouter.ingress.traffic.TrafficSettings;
import io.kvrouter.tracker.Decision;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The ingress's session affinity in a lab run ({@code +affinity}, {@link LabProgramFeatures}): each
 * decision of a request with a session key goes through the product's own {@link SessionRouter},
 * which looks the session's binding up, asks the router with it as the bound replica (the tracker's
 * {@code SteeringRule} then puts the bound replica first unless it is busy or its work exceeds the
 * policy's choice by more than {@code affinity-bonus-tokens}), and binds, rebinds or refreshes the
 * session where the request went. The bindings live in one map for every router of the run, as the
 * ingresses' Distributed Data map with {@code write = all} converges, and expire {@code ttl} after
 * their last write, as {@code SessionDirectory} ignores them; the clock is the run's virtual time.
 * The settings are the ingress's defaults ({@code kvrouter.ingress.traffic.sessions} in its {@code
 * reference.conf}: a bonus of 2,048 tokens, a TTL of 30 minutes, rewritten once a minute).
 *
 * <p>The session key of a request is its workload session ({@code WorkloadRequest#session}), what
 * an agent sends as {@code X-Session-ID}: a sub-agent of the agent workload has a session of its
 * own (its own conversation), so a fan-out's first requests open new sessions and are placed by the
 * policy, not pulled to the parent's replica by its binding.
 *
 * <p>With a {@link ProgramHold} ({@code +hold}) the session router holds a bound session on its
 * replica while its history (the request's prompt) fits beside the others held there, by pinning
 * the query ({@link ReplicaQuery#pinnedReplica()}): the placer is then told the request is held.
 *
 * <p>Cost: O(1) per decision beyond the router's (and the hold's; with a hold, an int array of the
 * prompt's length per decision, as the ingress's query carries the prompt's tokens).
 * Single-threaded, one per run: the router it wraps completes at once, so {@link #decide} returns
 * the decision of that call.
 */
final class LabSessions {

  /**
   * Places a request given its session's bound replica (null: none), whether it opens it, and
   * whether it is held there (it must run on the bound replica).
   */
  @FunctionalInterface
  interface Placer {
    Decision place(String boundReplica, boolean opensSession, boolean held);
  }

  private final Map<String, SessionBinding> bindings = new HashMap<>();
  private final long ttlMillis;
  private final double affinityBonusTokens;
  private final SessionRouter router;
  private final boolean holding;
  private long nowMillis;
  private Placer placer;
  private Decision decision;

  LabSessions(TrafficSettings.Sessions settings) {
    this(settings, null);
  }

  /** With {@code hold} holding sessions on their replica (null: none). */
  LabSessions(TrafficSettings.Sessions settings, ProgramHold hold) {
    this.ttlMillis = settings.ttl().toMillis();
    this.affinityBonusTokens = settings.affinityBonusTokens();
    this.holding = hold != null;
    this.router =
        new SessionRouter(
            new Placing(),
            new Store(),
            settings.refreshAfter().toMillis(),
            () -> nowMillis,
            TrafficMetrics.discarding(),
            hold);
  }

  /**
   * With the ingress's default session settings and its default hold ({@code
   * kvrouter.ingress.programs.hold}) for replicas of {@code cacheTokens} each, with a share of
   * {@code percent} of it (-1: the default share), holding fitting sessions or not ({@code
   * onlyWhenFull}: held only when no other replica has room), with the queue test at {@code
   * queueExcess} (0: none).
   */
  static LabSessions holding(
      long cacheTokens, int percent, boolean onlyWhenFull, double queueExcess) {
    Config reference = ConfigFactory.defaultReference();
    ProgramHold.Settings d = ProgramHold.Settings.fromConfig(reference);
    double share = percent < 0 ? d.share() : percent / 100.0;
    return new LabSessions(
        TrafficSettings.fromConfig(reference).sessions(),
        new ProgramHold(
            new ProgramHold.Settings(
                cacheTokens, share, d.idle(), d.holdFitting() && !onlyWhenFull, queueExcess)));
  }

  /** With the ingress's default session settings. */
  static LabSessions defaults() {
    return new LabSessions(TrafficSettings.fromConfig(ConfigFactory.defaultReference()).sessions());
  }

  /** With the ingress's default session settings but an affinity bonus of {@code bonusTokens}. */
  static LabSessions withBonus(long bonusTokens) {
    TrafficSettings.Sessions d =
        TrafficSettings.fromConfig(ConfigFactory.defaultReference()).sessions();
    return new LabSessions(
        new TrafficSettings.Sessions(
            d.enabled(),
            bonusTokens,
            d.ttl(),
            d.refreshAfter(),
            d.pruneInterval(),
            d.shards(),
            d.write(),
            d.writeTimeout(),
            d.lookupTimeout()));
  }

  /** The affinity bonus the ingress grants a bound replica, in prompt tokens. */
  double affinityBonusTokens() {
    return affinityBonusTokens;
  }

  /**
   * Decides request {@code requestId} of session {@code sessionKey} (empty: none, placed without a
   * binding) at {@code nowMillis} with {@code placer}, binding the session where it went.
   */
  Decision decide(String requestId, String sessionKey, long nowMillis, Placer placer) {
    return decide(requestId, sessionKey, 0, nowMillis, placer);
  }

  /** As above for a prompt of {@code promptTokens} (the history a hold weighs). */
  Decision decide(
      String requestId, String sessionKey, int promptTokens, long nowMillis, Placer placer) {
    if (sessionKey == null || sessionKey.isEmpty()) {
      return placer.place(null, false, false);
    }
    this.nowMillis = nowMillis;
    this.placer = placer;
    this.decision = null;
    router
        .selectAndReserve(
            new ReplicaQuery(
                requestId,
                LabConfig.MODEL,
                new int[holding ? promptTokens : 0],
                1,
                Set.of(),
                sessionKey,
                null,
                null))
        .toCompletableFuture()
        .join();
    Decision d = decision;
    this.placer = null;
    this.decision = null;
    return d;
  }

  /** Request {@code requestId}'s prefill completed (its first token): what its replica owes. */
  void prefillCompleted(String requestId) {
    router.prefillCompleted(requestId);
  }

  /** Request {@code requestId} finished. */
  void released(String requestId) {
    router.released(requestId);
  }

  /** The replica {@code sessionKey} is bound to now, or null. */
  String boundReplica(String sessionKey, long nowMillis) {
    SessionBinding b = bindings.get(SessionRouter.sessionOf(LabConfig.MODEL, sessionKey));
    return b == null || nowMillis - b.touchedMillis() > ttlMillis ? null : b.replica();
  }

  /** The router the session router wraps: the run's placer, completing at once. */
  private final class Placing implements Router {
    @Override
    public CompletionStage<RouteOutcome> selectAndReserve(ReplicaQuery query) {
      decision =
          placer.place(query.boundReplica(), query.opensSession(), query.pinnedReplica() != null);
      RouteOutcome out =
          decision.placed()
              ? new RouteOutcome.Routed(
                  query.requestId(),
                  new Target(decision.chosen(), "", true),
                  cachedTokens(decision))
              : new RouteOutcome.NoReplica("no replica left");
      return CompletableFuture.completedFuture(out);
    }

    @Override
    public void prefillCompleted(String reservationId) {}

    @Override
    public void released(String reservationId) {}

    @Override
    public Set<String> servedModels() {
      return Set.of(LabConfig.MODEL);
    }

    @Override
    public String baseModel(String model) {
      return model;
    }

    @Override
    public boolean disaggregated(String model) {
      return false;
    }
  }

  /** The prompt tokens the policy expected cached on the replica it chose. */
  private static int cachedTokens(Decision d) {
    for (Decision.Candidate c : d.ranked()) {
      if (c.replicaId().equals(d.chosen())) {
        return c.cachedTokens();
      }
    }
    return 0;
  }

  /** The bindings on the run's virtual clock, expired {@code ttl} after their last write. */
  private final class Store implements SessionStore {
    @Override
    public CompletionStage<SessionBinding> lookup(String session) {
      SessionBinding b = bindings.get(session);
      boolean live = b != null && nowMillis - b.touchedMillis() <= ttlMillis;
      return CompletableFuture.completedFuture(live ? b : null);
    }

    @Override
    public void bind(String session, String replica) {
      bindings.put(session, new SessionBinding(replica, nowMillis));
    }
  }
}

package io.kvrouter.ingress.proxy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.ingress.api.ApiError;
import io.kvrouter.ingress.api.Endpoint;
import io.kvrouter.ingress.api.EngineExchange;
import io.kvrouter.ingress.api.InferenceRequest;
import io.kvrouter.ingress.api.TokenizedPrompt;
import io.kvrouter.ingress.metrics.ProxyListener;
import io.kvrouter.ingress.pd.DecodeHop;
import io.kvrouter.ingress.pd.Disaggregation;
import io.kvrouter.ingress.pd.PdSettings;
import io.kvrouter.ingress.routing.ReplicaQuery;
import io.kvrouter.ingress.routing.RouteOutcome;
import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.stage.SameThread;
import io.kvrouter.ingress.tracing.RequestTrace;
import io.kvrouter.ingress.traffic.PeerQueues;
import io.kvrouter.ingress.traffic.QueueState;
import io.kvrouter.ingress.traffic.RequestTraffic;
import io.kvrouter.ingress.traffic.TrafficMetrics;
import io.kvrouter.ingress.traffic.TrafficSettings;
import io.kvrouter.protocol.ReplicaInfo;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.stream.Materializer;

/**
 * Forwards a validated request to the replica the router picks, and keeps the reservation's
 * lifecycle honest.
 *
 * <p>Per attempt: select-and-reserve (excluding replicas already tried), then an {@link EngineCall}
 * sends the request and waits for the first byte of the answer. A connection failure, a 5xx, a
 * timeout or an empty body before that first byte releases the reservation and tries the next
 * replica, up to {@link ProxySettings#maxAttempts()}. Once the first byte is in, the response is
 * committed: streams are relayed chunk by chunk with backpressure, and a failure later in the
 * stream moves to another replica where it can ({@link StreamMigration}) and otherwise reaches the
 * client as an error frame in the protocol's own form (OpenAI {@code data: {"error":...}},
 * Anthropic {@code event: error}). The first byte marks prefill completed; end, error, timeout or
 * client disconnect releases, exactly once. What is sent to the chosen engine, and how its answer
 * is put to the client, is the request's {@link EngineExchange} for that engine (the protocols live
 * in {@code api/}).
 *
 * <p>Admission: when every replica is busy, or none is predicted to meet the request's TTFT target,
 * the request waits in the {@link AdmissionQueue} (by priority, fairly among tenants, then by age),
 * and while requests of its model wait a newcomer queues behind them. It gets 429 with {@code
 * Retry-After} when the queue is full and it may displace nobody, when a more pressing request
 * displaces it, when it has waited too long, or when waiting can no longer meet its TTFT target.
 * Each phase (decide, queue, first byte, stream) is a span of the request's trace, and the engine
 * receives the trace's {@code traceparent}. An answer says where it went ({@link RouteHeaders}).
 */
public final class ProxyService {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ProxyService.class);

  private final Router router;
  private final EngineCall engine;
  private final ProxySettings settings;
  private final ProxyListener listener;
  private final AdmissionQueue admission;
  private final TrafficMetrics traffic;
  private final int retryAfterSeconds;
  private final Disaggregation disaggregation;
  private final Migrations migrations;

  /**
   * @param queueSettings the router queue's fair-queuing quantum, fair headroom and {@code
   *     Retry-After}
   * @param peers what the other ingresses' router queues wait with
   * @param heads told what this ingress's router queue waits with
   * @param tokens the model's tokenizer for a migrated stream's generated text
   */
  public ProxyService(
      ActorSystem<?> system,
      Router router,
      ObjectMapper mapper,
      ProxySettings settings,
      ProxyListener listener,
      TrafficSettings queueSettings,
      TrafficMetrics traffic,
      PeerQueues peers,
      Consumer<QueueState> heads,
      TextTokens tokens) {
    this.admission =
        new AdmissionQueue(
            settings.queueCapacity(),
            settings.queueMaxWait(),
            settings.queueRecheck(),
            queueSettings.quantumTokens(),
            peers,
            heads,
            queueSettings.fairHeadroom());
    this.router = new SignallingRouter(router, admission);
    traffic.queueWaiting(admission, AdmissionQueue::size);
    this.engine =
        new EngineCall(
            Http.get(system),
            Materializer.matFromSystem(system),
            this.router,
            mapper,
            settings,
            listener,
            traffic);
    this.migrations =
        new Migrations(
            this.router,
            engine,
            settings,
            listener,
            mapper,
            Materializer.matFromSystem(system),
            tokens);
    this.settings = settings;
    this.listener = listener;
    this.traffic = traffic;
    this.retryAfterSeconds = (int) Math.max(1, queueSettings.retryAfter().toSeconds());
    this.disaggregation =
        new Disaggregation(
            Http.get(system),
            Materializer.matFromSystem(system),
            this.router,
            mapper,
            PdSettings.fromConfig(system.settings().config()));
  }

  /**
   * The router requests are placed through: a release through it wakes the router queue (for
   * requests the ingress makes itself, such as a program's warming prefill).
   */
  public Router router() {
    return router;
  }

  /** The outcome of forwarding: a response to send, or an error to answer. */
  public sealed interface Result {
    /** A response (possibly streaming) ready for the client. */
    record Answered(HttpResponse response) implements Result {}

    /** No replica could answer. */
    record Failed(ApiError error) implements Result {}
  }

  /**
   * One request's state across attempts.
   *
   * @param waiting its place in the admission queue, or null when it holds none
   */
  private record Job(
      InferenceRequest request,
      int[] tokenIds,
      String requestId,
      RequestTraffic traffic,
      Waiting waiting) {
    Job waitingAs(Waiting w) {
      return new Job(request, tokenIds, requestId, traffic, w);
    }
  }

  /** A place in the admission queue, since when, and its trace span. */
  private record Waiting(AdmissionQueue.Ticket ticket, long sinceNanos, RequestTrace.Phase span) {}

  /** Routes and forwards {@code request}, whose prompt tokenized to {@code tokenIds}. */
  public CompletionStage<Result> forward(
      InferenceRequest request, int[] tokenIds, String requestId) {
    return forward(
        request,
        tokenIds,
        requestId,
        RequestTraffic.plain(tokenIds.length + (long) Math.max(0, request.maxTokens())));
  }

  /** The same, for a request whose tenant, priority, target and trace are {@code traffic}. */
  public CompletionStage<Result> forward(
      InferenceRequest request, int[] tokenIds, String requestId, RequestTraffic traffic) {
    return attempt(new Job(request, tokenIds, requestId, traffic, null), 1, Set.of(), null);
  }

  private CompletionStage<Result> attempt(
      Job job, int attempt, Set<String> excluded, String lastFailure) {
    if (attempt > settings.maxAttempts()) {
      return done(
          new Result.Failed(
              ApiError.upstream(
                  "No replica answered after "
                      + settings.maxAttempts()
                      + " attempts; last: "
                      + lastFailure)));
    }
    InferenceRequest request = job.request();
    RequestTraffic t = job.traffic();
    int headroom =
        admission.headroom(request.model(), t.priority(), t.tenant().id(), t.tenant().weight());
    if (job.waiting() == null && headroom == 0 && admission.hasWaiters(request.model())) {
      // No overtaking: while requests of this model wait, a newcomer takes its place behind them
      // (unless its tenant is below its fair share: it would be first in line anyway).
      return queue(job, attempt, excluded, lastFailure, "requests are waiting for a replica");
    }
    double target = job.traffic().ttftTargetMillis();
    ReplicaQuery query =
        new ReplicaQuery(
                job.requestId() + "#" + attempt,
                request.model(),
                job.tokenIds(),
                request.maxTokens(),
                excluded,
                request.sessionKey(),
                request.pinnedReplica(),
                request.endpoint() == Endpoint.RESPONSES ? ReplicaInfo.RESPONSES_API : null)
            .withTtftTarget(target > 0 ? Math.max(1, target - job.traffic().elapsedMillis()) : 0)
            .withCacheSalt(cacheSalt(request))
            .withImages(TokenizedPrompt.images(request))
            .withBusyHeadroom(headroom);
    RequestTrace.Phase decide =
        job.traffic().trace().phase("decide").set("kvrouter.attempt", attempt);
    return SameThread.of(router.selectAndReserve(query))
        .handle(
            (outcome, error) -> {
              if (error != null) {
                decide.fail(String.valueOf(error));
                dequeue(job, "failed");
                return CompletableFuture.<Result>failedFuture(error);
              }
              decide.set("kvrouter.outcome", outcome.getClass().getSimpleName()).end();
              return decided(job, attempt, excluded, lastFailure, outcome);
            })
        .thenCompose(x -> x);
  }

  private CompletionStage<Result> decided(
      Job job, int attempt, Set<String> excluded, String lastFailure, RouteOutcome outcome) {
    if (outcome instanceof RouteOutcome.Busy busy) {
      return queue(job, attempt, excluded, lastFailure, busy.reason());
    }
    if (outcome instanceof RouteOutcome.SloMiss miss) {
      double left = job.traffic().ttftTargetMillis() - job.traffic().elapsedMillis();
      if (left < miss.floorMillis()) {
        dequeue(job, "slo");
        return sloRejected(
            job,
            miss.reason()
                + "; even an idle replica is predicted at "
                + Math.round(miss.floorMillis())
                + " ms");
      }
      return queue(job, attempt, excluded, lastFailure, miss.reason());
    }
    if (outcome instanceof RouteOutcome.Routed routed) {
      // Counted as its tenant's before its place passes on, so the next turn sees it running.
      admission.started(routed.reservationId(), job.request().model(), job.traffic().tenant().id());
    }
    Job placed = dequeue(job, outcome instanceof RouteOutcome.Routed ? "placed" : "failed");
    if (outcome instanceof RouteOutcome.Routed routed) {
      return send(placed, routed, attempt, excluded);
    }
    String reason = ((RouteOutcome.NoReplica) outcome).reason();
    if (lastFailure != null) {
      reason = reason + "; last failure: " + lastFailure;
    }
    return done(new Result.Failed(ApiError.unavailable(reason, 2)));
  }

  /**
   * No replica can take the request now: wait in the admission queue for a turn and ask again, or
   * answer 429 when the queue is full, the request is displaced, or it has waited too long.
   */
  private CompletionStage<Result> queue(
      Job job, int attempt, Set<String> excluded, String lastFailure, String reason) {
    long now = System.nanoTime();
    RequestTraffic t = job.traffic();
    Job waiting = job;
    if (job.waiting() == null) {
      AdmissionQueue.Ticket ticket =
          admission.enter(
              job.request().model(),
              t.priority(),
              t.tenant().id(),
              t.tokens(),
              t.tenant().weight(),
              t.rank());
      if (ticket == null) {
        traffic.queueFull(t.priority());
        return overloaded(
            job, reason + "; the router queue is full (" + admission.size() + " waiting)");
      }
      RequestTrace.Phase span = t.trace().phase("queue").set("kvrouter.priority", t.priority());
      waiting = job.waitingAs(new Waiting(ticket, now, span));
    } else if (now - job.waiting().sinceNanos() > admission.maxWait().toNanos()) {
      dequeue(job, "timeout");
      return overloaded(
          job, reason + "; waited " + admission.maxWait().toMillis() + " ms in the router queue");
    } else if (t.ttftTargetMillis() > 0 && t.elapsedMillis() > t.ttftTargetMillis()) {
      dequeue(job, "slo");
      return sloRejected(job, reason + "; the TTFT target passed while waiting");
    }
    Job next = waiting;
    AdmissionQueue.Ticket ticket = next.waiting().ticket();
    return admission
        .await(ticket, patience(next, now))
        .thenCompose(
            wake ->
                switch (wake) {
                  case SHED -> {
                    Waiting w = next.waiting();
                    traffic.queued(t.priority(), "shed", System.nanoTime() - w.sinceNanos());
                    w.span().fail("shed for a more pressing request");
                    yield overloaded(
                        next,
                        reason
                            + "; shed from the router queue for a more pressing request (priority"
                            + " below "
                            + t.priority()
                            + ")");
                  }
                  case TURN, RECHECK -> {
                    if (admission.isNext(ticket)) {
                      yield attempt(next, attempt, excluded, lastFailure);
                    }
                    if (wake == AdmissionQueue.Wake.TURN) {
                      // A more pressing request arrived since this turn was given: pass it on.
                      admission.signal();
                    }
                    yield queue(next, attempt, excluded, lastFailure, reason);
                  }
                });
  }

  /**
   * How long a waiting job may still wait: until its time in the router queue or its TTFT target
   * runs out (a millisecond past, so that the check in {@link #queue} finds it passed).
   */
  private Duration patience(Job job, long nowNanos) {
    long left = admission.maxWait().toNanos() - (nowNanos - job.waiting().sinceNanos());
    RequestTraffic t = job.traffic();
    if (t.ttftTargetMillis() > 0) {
      left = Math.min(left, Math.round((t.ttftTargetMillis() - t.elapsedMillis()) * 1_000_000));
    }
    return Duration.ofNanos(Math.max(0, left)).plusMillis(1);
  }

  /** The job without its queue place: placed, or given up with {@code outcome}. */
  private Job dequeue(Job job, String outcome) {
    Waiting w = job.waiting();
    if (w == null) {
      return job;
    }
    if (outcome.equals("placed")) {
      admission.placed(w.ticket());
      w.span().end();
    } else {
      admission.leave(w.ticket());
      w.span().fail(outcome);
    }
    traffic.queued(job.traffic().priority(), outcome, System.nanoTime() - w.sinceNanos());
    return job.waitingAs(null);
  }

  private CompletionStage<Result> overloaded(Job job, String message) {
    if (job.traffic().ttftTargetMillis() > 0) {
      traffic.slo("rejected");
    }
    return done(new Result.Failed(ApiError.overloaded(message, retryAfterSeconds)));
  }

  private CompletionStage<Result> sloRejected(Job job, String message) {
    traffic.slo("rejected");
    return done(
        new Result.Failed(
            new ApiError(
                429,
                message,
                "rate_limit_error",
                null,
                "ttft_target_unattainable",
                retryAfterSeconds)));
  }

  /**
   * The {@code cache_salt} the engine will see (vLLM's request field, forwarded in the engine
   * body), or null when the client sent none or not a string.
   */
  static String cacheSalt(InferenceRequest request) {
    var salt = request.engineBody() == null ? null : request.engineBody().get("cache_salt");
    return salt != null && salt.isTextual() ? salt.asText() : null;
  }

  private CompletionStage<Result> send(
      Job job, RouteOutcome.Routed routed, int attempt, Set<String> excluded) {
    // A disaggregated request first takes its prefill hop (pd/); the others go as they are.
    return disaggregation
        .exchange(job.request(), job.tokenIds(), routed, job.requestId() + "#" + attempt)
        .thenCompose(
            hop ->
                engine
                    .call(
                        new EngineCall.Request(
                            job.request(),
                            job.tokenIds(),
                            job.traffic(),
                            migrations.forRequest(
                                job.request(), job.tokenIds(), job.requestId(), job.traffic())),
                        routed,
                        hop.exchange())
                    .thenApply(result -> answering(job, routed, hop, result)))
        .handle(
            (result, error) -> {
              if (error == null) {
                return done(result);
              }
              String why = EngineCall.describe(error, routed.target());
              try {
                listener.retried(job.request().model(), routed.target().replicaId(), why);
              } catch (RuntimeException listenerFailure) {
                LOG.warn("proxy listener failed", listenerFailure);
              }
              Set<String> tried = new HashSet<>(excluded);
              tried.add(routed.target().replicaId());
              return attempt(job, attempt + 1, tried, why);
            })
        .thenCompose(x -> x);
  }

  /**
   * The answer of the replica {@code routed} names, counted by its prefill path and carrying the
   * {@link RouteHeaders} (errors the engine answered included) unless they are switched off.
   */
  private Result answering(Job job, RouteOutcome.Routed routed, DecodeHop hop, Result result) {
    try {
      listener.answering(job.request().model(), hop.path().label());
    } catch (RuntimeException listenerFailure) {
      LOG.warn("proxy listener failed", listenerFailure);
    }
    if (!settings.routeHeaders() || !(result instanceof Result.Answered answered)) {
      return result;
    }
    return new Result.Answered(answered.response().addHeaders(RouteHeaders.of(routed, hop)));
  }

  private static <T> CompletionStage<T> done(T value) {
    return CompletableFuture.completedFuture(value);
  }
}

package io.kvrouter.ingress.proxy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.ingress.api.ApiError;
import io.kvrouter.ingress.api.Endpoint;
import io.kvrouter.ingress.api.EngineExchange;
import io.kvrouter.ingress.api.InferenceRequest;
import io.kvrouter.ingress.api.Sse;
import io.kvrouter.ingress.routing.RouteOutcome;
import io.kvrouter.ingress.routing.RouteQuery;
import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.routing.Target;
import io.kvrouter.protocol.ReplicaInfo;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.MediaTypes;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.KillSwitches;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.UniqueKillSwitch;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * Forwards a validated request to the replica the router picks, and keeps the reservation's
 * lifecycle honest.
 *
 * <p>Per attempt: select-and-reserve (excluding replicas already tried), send, and wait for the
 * first byte of the answer. A connection failure, a 5xx, a timeout or an empty body before that
 * first byte releases the reservation and tries the next replica, up to {@link
 * ProxySettings#maxAttempts()}. Once the first byte is in, the response is committed: streams are
 * relayed chunk by chunk with backpressure, and a failure later in the stream reaches the client as
 * an error frame in the protocol's own form (OpenAI {@code data: {"error":...}}, Anthropic {@code
 * event: error}). The first byte marks prefill completed; end, error, timeout or client disconnect
 * releases, exactly once. What is sent to the chosen engine, and how its answer is put to the
 * client, is the request's {@link EngineExchange} for that engine (the protocols live in {@code
 * api/}).
 */
public final class ProxyService {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ProxyService.class);

  private final Http http;
  private final Materializer materializer;
  private final Router router;
  private final ObjectMapper mapper;
  private final ProxySettings settings;
  private final ProxyListener listener;
  private final AdmissionQueue admission;

  public ProxyService(
      ActorSystem<?> system,
      Router router,
      ObjectMapper mapper,
      ProxySettings settings,
      ProxyListener listener) {
    this.http = Http.get(system);
    this.materializer = Materializer.matFromSystem(system);
    this.admission =
        new AdmissionQueue(
            settings.queueCapacity(), settings.queueMaxWait(), settings.queueRecheck());
    this.router = new SignallingRouter(router, admission);
    this.mapper = mapper;
    this.settings = settings;
    this.listener = listener;
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
   * @param queuedSinceNanos when it entered the admission queue, or -1 when it holds no place
   */
  private record Job(
      InferenceRequest request, int[] tokenIds, String requestId, long queuedSinceNanos) {
    Job queued(long now) {
      return new Job(request, tokenIds, requestId, now);
    }

    Job dequeued() {
      return new Job(request, tokenIds, requestId, -1);
    }
  }

  /** Routes and forwards {@code request}, whose prompt tokenized to {@code tokenIds}. */
  public CompletionStage<Result> forward(
      InferenceRequest request, int[] tokenIds, String requestId) {
    return attempt(new Job(request, tokenIds, requestId, -1), 1, Set.of(), null);
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
    RouteQuery query =
        new RouteQuery(
            job.requestId() + "#" + attempt,
            request.model(),
            job.tokenIds(),
            request.maxTokens(),
            excluded,
            request.sessionKey(),
            request.pinnedReplica(),
            request.endpoint() == Endpoint.RESPONSES ? ReplicaInfo.RESPONSES_API : null);
    return router
        .selectAndReserve(query)
        .whenComplete(
            (outcome, error) -> {
              if (error != null && job.queuedSinceNanos() >= 0) {
                admission.leave(); // the ask failed: its place in the queue is given back
              }
            })
        .thenCompose(
            outcome -> {
              if (outcome instanceof RouteOutcome.Busy busy) {
                return queue(job, attempt, excluded, lastFailure, busy);
              }
              Job placed = job;
              if (job.queuedSinceNanos() >= 0) {
                admission.leave();
                placed = job.dequeued();
              }
              if (outcome instanceof RouteOutcome.Routed routed) {
                return send(placed, routed, attempt, excluded);
              }
              String reason = ((RouteOutcome.NoReplica) outcome).reason();
              if (lastFailure != null) {
                reason = reason + "; last failure: " + lastFailure;
              }
              return done(new Result.Failed(ApiError.unavailable(reason, 2)));
            });
  }

  /**
   * Every replica is busy: wait in the bounded admission queue and ask again, or answer 429 when
   * the queue is full or the wait is over.
   */
  private CompletionStage<Result> queue(
      Job job, int attempt, Set<String> excluded, String lastFailure, RouteOutcome.Busy busy) {
    long now = System.nanoTime();
    Job waiting = job;
    if (job.queuedSinceNanos() < 0) {
      if (!admission.tryEnter()) {
        return done(
            new Result.Failed(
                ApiError.overloaded(
                    busy.reason() + "; the router queue is full (" + admission.size() + " waiting)",
                    1)));
      }
      waiting = job.queued(now);
    } else if (now - job.queuedSinceNanos() > admission.maxWait().toNanos()) {
      admission.leave();
      return done(
          new Result.Failed(
              ApiError.overloaded(
                  busy.reason()
                      + "; waited "
                      + admission.maxWait().toMillis()
                      + " ms in the router queue",
                  1)));
    }
    Job next = waiting;
    return admission.await().thenCompose(v -> attempt(next, attempt, excluded, lastFailure));
  }

  private CompletionStage<Result> send(
      Job job, RouteOutcome.Routed routed, int attempt, Set<String> excluded) {
    Target target = routed.target();
    ReservationLifecycle lifecycle = new ReservationLifecycle(router, routed.reservationId());
    EngineExchange exchange = EngineExchange.of(job.request(), job.tokenIds(), target, mapper);
    HttpRequest engineRequest =
        HttpRequest.POST(target.baseUrl() + exchange.path())
            .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, exchange.body()));
    listener.sent(job.request().model(), target.replicaId());
    CompletableFuture<HttpResponse> response =
        http.singleRequest(engineRequest).toCompletableFuture();
    CompletableFuture<HttpResponse> timed =
        response.copy().orTimeout(settings.firstByteTimeout().toMillis(), TimeUnit.MILLISECONDS);
    timed.whenComplete(
        (r, e) -> {
          if (e != null) {
            // A late answer after the timeout must not hold its connection.
            response.thenAccept(late -> late.discardEntityBytes(materializer));
          }
        });
    return timed
        .thenCompose(
            r -> {
              if (r.status().intValue() >= 500) {
                r.discardEntityBytes(materializer);
                throw new AttemptFailed(
                    "replica " + target.replicaId() + " answered " + r.status().intValue());
              }
              return job.request().stream() && r.status().isSuccess()
                  ? stream(job, routed, lifecycle, r, exchange)
                  : whole(job, routed, lifecycle, r, exchange);
            })
        .handle(
            (result, error) -> {
              if (error == null) {
                return done(result);
              }
              lifecycle.release();
              String why = describe(error, target);
              try {
                listener.retried(job.request().model(), target.replicaId(), why);
              } catch (RuntimeException listenerFailure) {
                LOG.warn("proxy listener failed", listenerFailure);
              }
              Set<String> tried = new HashSet<>(excluded);
              tried.add(target.replicaId());
              return attempt(job, attempt + 1, tried, why);
            })
        .thenCompose(x -> x);
  }

  private CompletionStage<Result> whole(
      Job job,
      RouteOutcome.Routed routed,
      ReservationLifecycle lifecycle,
      HttpResponse r,
      EngineExchange exchange) {
    return r.entity()
        .toStrict(settings.requestTimeout().toMillis(), materializer)
        .thenApply(
            strict -> {
              lifecycle.firstByte();
              byte[] bytes = strict.getData().toArray();
              JsonNode body = parse(bytes);
              int cached = body == null ? -1 : Sse.cachedTokens(body);
              report(job, routed, cached);
              lifecycle.release();
              return new Result.Answered(exchange.whole(r.status(), bytes));
            });
  }

  private CompletionStage<Result> stream(
      Job job,
      RouteOutcome.Routed routed,
      ReservationLifecycle lifecycle,
      HttpResponse r,
      EngineExchange exchange) {
    UsageSniffer usage = new UsageSniffer();
    Source<ByteString, ?> upstream =
        r.entity()
            .getDataBytes()
            .watchTermination(
                (mat, finished) -> {
                  finished.whenComplete((d, e) -> lifecycle.release());
                  return mat;
                });
    Pair<UniqueKillSwitch, CompletionStage<Pair<List<ByteString>, Source<ByteString, NotUsed>>>>
        run =
            upstream
                .viaMat(KillSwitches.single(), Keep.right())
                .prefixAndTail(1)
                .toMat(Sink.head(), Keep.both())
                .run(materializer);
    CompletableFuture<Pair<List<ByteString>, Source<ByteString, NotUsed>>> first =
        run.second()
            .toCompletableFuture()
            .copy()
            .orTimeout(settings.firstByteTimeout().toMillis(), TimeUnit.MILLISECONDS);
    return first
        .thenApply(
            pair -> {
              if (pair.first().isEmpty()) {
                throw new AttemptFailed(
                    "replica " + routed.target().replicaId() + " sent an empty stream");
              }
              lifecycle.firstByte();
              Source<ByteString, NotUsed> body =
                  Source.from(pair.first())
                      .concat(pair.second())
                      .map(
                          bytes -> {
                            usage.feed(bytes.toArray());
                            return bytes;
                          })
                      // Reported once every chunk went through the sniffer: the engine's stream
                      // can end before the client's copy of it has been read, and the usage chunk
                      // comes last.
                      .watchTermination(
                          (mat, delivered) -> {
                            delivered.whenComplete(
                                (d, e) -> report(job, routed, usage.cachedTokens()));
                            return mat;
                          });
              body = exchange.stream(body);
              return (Result)
                  new Result.Answered(
                      HttpResponse.create()
                          .withStatus(r.status())
                          .withEntity(
                              HttpEntities.create(
                                  MediaTypes.TEXT_EVENT_STREAM.toContentType(), body)));
            })
        .whenComplete(
            (ok, e) -> {
              if (e != null) {
                run.first()
                    .abort(
                        e instanceof TimeoutException ? e : new AttemptFailed(String.valueOf(e)));
              }
            });
  }

  /** Tells the listener; a failing listener must never fail or retry the request. */
  private void report(Job job, RouteOutcome.Routed routed, int reportedCached) {
    if (job.request().pinnedReplica() != null) {
      // The engine prepended state the router never saw (a stored Responses conversation): its
      // cached count says nothing about the router's prediction for the part it rendered.
      reportedCached = -1;
    }
    try {
      listener.answered(
          job.request().model(),
          routed.target().replicaId(),
          job.tokenIds().length,
          routed.predictedCachedTokens(),
          reportedCached);
    } catch (RuntimeException e) {
      LOG.warn("proxy listener failed", e);
    }
  }

  private JsonNode parse(byte[] bytes) {
    try {
      return mapper.readTree(bytes);
    } catch (Exception e) {
      return null;
    }
  }

  private static String describe(Throwable error, Target target) {
    Throwable cause = error;
    while ((cause instanceof java.util.concurrent.CompletionException
            || cause instanceof java.util.concurrent.ExecutionException)
        && cause.getCause() != null) {
      cause = cause.getCause();
    }
    if (cause instanceof AttemptFailed) {
      return cause.getMessage();
    }
    if (cause instanceof TimeoutException) {
      return "replica " + target.replicaId() + " timed out before the first byte";
    }
    return "replica "
        + target.replicaId()
        + ": "
        + cause.getClass().getSimpleName()
        + " "
        + cause.getMessage();
  }

  private static <T> CompletionStage<T> done(T value) {
    return CompletableFuture.completedFuture(value);
  }

  /** An attempt failed before the first byte; the next replica is tried. */
  private static final class AttemptFailed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    AttemptFailed(String message) {
      super(message, null, false, false);
    }
  }
}

package io.kvrouter.ingress.proxy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.ingress.api.EngineExchange;
import io.kvrouter.ingress.api.InferenceRequest;
import io.kvrouter.ingress.api.Sse;
import io.kvrouter.ingress.metrics.ProxyListener;
import io.kvrouter.ingress.routing.RouteOutcome;
import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.routing.Target;
import io.kvrouter.ingress.stage.SameThread;
import io.kvrouter.ingress.tracing.RequestTrace;
import io.kvrouter.ingress.traffic.RequestTraffic;
import io.kvrouter.ingress.traffic.TrafficMetrics;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.MediaTypes;
import org.apache.pekko.http.javadsl.model.Uri;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.KillSwitches;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.UniqueKillSwitch;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * One attempt's call to the replica chosen for a request: the engine request (with the trace's
 * {@code traceparent}), the first-byte timeout, and the answer relayed whole or as a stream with
 * backpressure. The first byte marks prefill completed (and is compared with the tracker's TTFT
 * prediction); end, error, timeout or client disconnect releases the reservation, exactly once. A
 * failure before the first byte (connection, 5xx, timeout, empty stream) releases it and fails the
 * call with {@link AttemptFailed} so that the {@link ProxyService} tries the next replica.
 */
final class EngineCall {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(EngineCall.class);

  /**
   * What the call needs of the request.
   *
   * @param migration what keeps its stream going when the engine dies, or null
   */
  record Request(
      InferenceRequest request,
      int[] tokenIds,
      RequestTraffic traffic,
      StreamMigration migration) {}

  private final Http http;
  private final Materializer materializer;
  private final Router router;
  private final ObjectMapper mapper;
  private final ProxySettings settings;
  private final ProxyListener listener;
  private final TrafficMetrics traffic;

  /**
   * Engine URIs parsed once: parsing the URL string would be much of {@link #call}'s own CPU.
   * Cleared when it reaches {@value #MAX_URIS} (replicas come and go).
   */
  private final Map<String, Uri> uris = new ConcurrentHashMap<>();

  private static final int MAX_URIS = 1024;

  EngineCall(
      Http http,
      Materializer materializer,
      Router router,
      ObjectMapper mapper,
      ProxySettings settings,
      ProxyListener listener,
      TrafficMetrics traffic) {
    this.http = http;
    this.materializer = materializer;
    this.router = router;
    this.mapper = mapper;
    this.settings = settings;
    this.listener = listener;
    this.traffic = traffic;
  }

  /**
   * Calls the engine {@code routed} names. Completes with the client's answer once the engine's
   * first byte is in; fails with an {@link AttemptFailed} naming why (its reservation already
   * released) when the next replica should be tried.
   */
  CompletionStage<ProxyService.Result> call(Request job, RouteOutcome.Routed routed) {
    return call(
        job, routed, EngineExchange.of(job.request(), job.tokenIds(), routed.target(), mapper));
  }

  /** The same, sending {@code exchange} (a disaggregated request's decode hop, for one). */
  CompletionStage<ProxyService.Result> call(
      Request job, RouteOutcome.Routed routed, EngineExchange exchange) {
    Target target = routed.target();
    ReservationLifecycle lifecycle = new ReservationLifecycle(router, routed.reservationId());
    RequestTrace trace = job.traffic().trace();
    Call call = new Call(trace.engineCall(target.replicaId()), System.nanoTime());
    HttpRequest engineRequest =
        target.addressed(
            HttpRequest.create()
                .withMethod(HttpMethods.POST)
                .withUri(uri(target.baseUrl() + exchange.path()))
                // the body array is never written after it is built: sent without a copy
                .withEntity(
                    HttpEntities.create(
                        ContentTypes.APPLICATION_JSON,
                        ByteString.fromArrayUnsafe(exchange.body()))));
    for (var h : trace.engineHeaders(call.span()).entrySet()) {
      engineRequest = engineRequest.addHeader(RawHeader.create(h.getKey(), h.getValue()));
    }
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
              if (job.request().stream() && r.status().isSuccess()) {
                return stream(job, routed, lifecycle, r, exchange, call);
              }
              firstByte(job, routed, call, false);
              return whole(job, routed, lifecycle, r, exchange);
            })
        .handle(
            (result, error) -> {
              if (error == null) {
                return result;
              }
              lifecycle.release();
              String why = describe(error, target);
              call.span().fail(why);
              throw new AttemptFailed(why);
            });
  }

  private CompletionStage<ProxyService.Result> whole(
      Request job,
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
              return new ProxyService.Result.Answered(exchange.whole(r.status(), bytes));
            });
  }

  private Uri uri(String url) {
    Uri uri = uris.get(url);
    if (uri == null) {
      if (uris.size() >= MAX_URIS) {
        uris.clear();
      }
      uri = Uri.create(url);
      uris.put(url, uri);
    }
    return uri;
  }

  /** One call to an engine: its trace span (up to the first byte) and when it was sent. */
  private record Call(RequestTrace.Phase span, long sentNanos) {}

  /**
   * The engine's first byte: ends the call's span, and for a stream compares the tracker's TTFT
   * prediction with what was observed. A request with a TTFT target met it when its first byte came
   * within the target of its arrival.
   */
  private void firstByte(Request job, RouteOutcome.Routed routed, Call call, boolean streaming) {
    call.span().end();
    if (streaming) {
      traffic.ttft(routed.predictedTtftMillis(), (System.nanoTime() - call.sentNanos()) / 1e6);
    }
    RequestTraffic t = job.traffic();
    if (t.ttftTargetMillis() > 0) {
      traffic.slo(t.elapsedMillis() <= t.ttftTargetMillis() ? "met" : "missed");
    }
  }

  private CompletionStage<ProxyService.Result> stream(
      Request job,
      RouteOutcome.Routed routed,
      ReservationLifecycle lifecycle,
      HttpResponse r,
      EngineExchange exchange,
      Call call) {
    UsageSniffer usage = new UsageSniffer();
    Source<ByteString, ?> upstream =
        r.entity()
            .getDataBytes()
            .watchTermination(
                (mat, finished) -> {
                  SameThread.of(finished).whenComplete((d, e) -> lifecycle.release());
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
              firstByte(job, routed, call, true);
              RequestTrace.Phase streaming = job.traffic().trace().phase("stream");
              Source<ByteString, NotUsed> body =
                  Source.from(pair.first())
                      .concat(pair.second())
                      .map(
                          bytes -> {
                            usage.feed(bytes);
                            return bytes;
                          })
                      // Reported once every chunk went through the sniffer: the engine's stream
                      // can end before the client's copy of it has been read, and the usage chunk
                      // comes last.
                      .watchTermination(
                          (mat, delivered) -> {
                            SameThread.of(delivered)
                                .whenComplete((d, e) -> report(job, routed, usage.cachedTokens()));
                            return mat;
                          });
              if (job.migration() != null) {
                body = job.migration().wrap(body, routed.target().replicaId());
              }
              body =
                  exchange.stream(body)
                      .watchTermination(
                          (mat, done) -> {
                            SameThread.of(done)
                                .whenComplete(
                                    (d, e) -> {
                                      if (e == null) {
                                        streaming.end();
                                      } else {
                                        streaming.fail(String.valueOf(e));
                                      }
                                    });
                            return mat;
                          });
              return (ProxyService.Result)
                  new ProxyService.Result.Answered(
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
  private void report(Request job, RouteOutcome.Routed routed, int reportedCached) {
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

  static String describe(Throwable error, Target target) {
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

  /** An attempt failed before the first byte; the next replica is tried. */
  static final class AttemptFailed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    AttemptFailed(String message) {
      super(message, null, false, false);
    }
  }
}

package io.kvrouter.ingress.drain;

import io.kvrouter.ingress.stage.SameThread;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.MediaTypes;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.Connection;
import org.apache.pekko.japi.function.Function;
import org.apache.pekko.japi.pf.PFBuilder;
import org.apache.pekko.stream.Graph;
import org.apache.pekko.stream.KillSwitches;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.SharedKillSwitch;
import org.apache.pekko.stream.SourceShape;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import scala.PartialFunction;

/**
 * Counts the HTTP requests in flight, until the last byte of their response, so a draining ingress
 * can wait for its streams.
 *
 * <p>Pekko HTTP's graceful {@code ServerBinding.terminate} waits for responses to be emitted but
 * not for their streamed entities (the same code as Akka HTTP, where this is akka/akka-http issue
 * 3209): an SSE stream would be cut at once. So the ingress wraps its handler: each request counts
 * from arrival until its response entity completes (or fails, or the client goes away); once {@link
 * #close()}d, new requests on connections still open get {@code 503} with {@code Connection:
 * close}; {@link #drained(Duration)} completes when the count is back to zero, or when the grace
 * period is over. Only then is the binding terminated.
 *
 * <p>A node the cluster downed does not drain: its peers already dropped its reservations and it no
 * longer hears of replicas coming and going. {@link #abort()} ends every request in flight at once:
 * one not answered yet gets {@code 503} with an error object in its API's shape (OpenAI, or
 * Anthropic under {@code /v1/messages}); an event stream under way gets an error event and ends;
 * any other streamed body fails (the connection is cut, so the client cannot take a truncated body
 * for a whole one). The requests' own work goes on behind and releases what it holds as it ends.
 *
 * <p>Cost: one atomic increment and decrement per request, one set entry until it is answered, and
 * on a streamed entity the stages of one kill switch shared by the node (a listener registered
 * while the stream runs), a recovery for event streams and the count's end; the frames that end a
 * cut event stream are built once.
 */
public final class InFlightRequests {

  private static final String DOWNED =
      "This ingress was removed from the cluster; retry on another.";

  /** The last event of an OpenAI event stream the downed node cut: an error object, then DONE. */
  private static final PartialFunction<Throwable, Graph<SourceShape<ByteString>, NotUsed>>
      OPENAI_EVENT = ending("data: " + downedJson(false) + "\n\ndata: [DONE]\n\n");

  /** The same for an Anthropic event stream: an error event. */
  private static final PartialFunction<Throwable, Graph<SourceShape<ByteString>, NotUsed>>
      ANTHROPIC_EVENT = ending("event: error\ndata: " + downedJson(true) + "\n\n");

  private final Materializer materializer;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final CompletableFuture<Done> empty = new CompletableFuture<>();

  /** Requests not answered yet: each answers 503 when run. */
  private final Set<Runnable> cuts = ConcurrentHashMap.newKeySet();

  /**
   * Every streamed body runs through it; {@link #abort()} fails them all at once, and a body that
   * starts after that fails as it starts.
   */
  private final SharedKillSwitch downed = KillSwitches.shared("kvrouter-ingress-downed");

  private volatile boolean closed;
  private volatile boolean aborted;

  public InFlightRequests(Materializer materializer) {
    this.materializer = materializer;
  }

  /** The handler that counts what {@code inner} serves and refuses new requests once closed. */
  public Function<HttpRequest, CompletionStage<HttpResponse>> wrap(
      Function<HttpRequest, CompletionStage<HttpResponse>> inner) {
    return request -> {
      if (closed) {
        request.discardEntityBytes(materializer);
        return CompletableFuture.completedFuture(refused());
      }
      inFlight.incrementAndGet();
      boolean anthropic = request.getUri().path().startsWith("/v1/messages");
      CompletionStage<HttpResponse> response;
      try {
        response = inner.apply(request);
      } catch (Exception e) {
        leave();
        throw e;
      }
      CompletableFuture<HttpResponse> answer = new CompletableFuture<>();
      Runnable cut = () -> answer.complete(downed(anthropic));
      cuts.add(cut);
      if (aborted) {
        cut.run();
      }
      // The routes' answer is a Pekko future: taken up where it completes, not on the common pool.
      SameThread.of(response)
          .whenComplete(
              (r, e) -> {
                cuts.remove(cut);
                if (e != null) {
                  answer.completeExceptionally(e);
                } else if (!answer.complete(r)) {
                  r.discardEntityBytes(materializer); // the client was answered already
                }
              });
      return answer.handle(
          (r, e) -> {
            if (e != null) {
              leave();
              throw e instanceof RuntimeException re ? re : new IllegalStateException(e);
            }
            return counted(r, anthropic);
          });
    };
  }

  private HttpResponse counted(HttpResponse response, boolean anthropic) {
    HttpEntity entity = response.entity();
    if (entity.isKnownEmpty() || entity instanceof HttpEntity.Strict) {
      leave();
      return response;
    }
    Flow<ByteString, ByteString, NotUsed> body = Flow.<ByteString>create().via(downed.flow());
    if (entity.getContentType().mediaType().equals(MediaTypes.TEXT_EVENT_STREAM)) {
      body = body.recoverWithRetries(1, anthropic ? ANTHROPIC_EVENT : OPENAI_EVENT);
    }
    return response.transformEntityDataBytes(
        body.watchTermination(
            (mat, done) -> {
              SameThread.of(done).whenComplete((d, e) -> leave());
              return mat;
            }));
  }

  /** The partial function that ends an event stream the downed node cut with {@code frame}. */
  private static PartialFunction<Throwable, Graph<SourceShape<ByteString>, NotUsed>> ending(
      String frame) {
    Source<ByteString, NotUsed> last = Source.single(ByteString.fromString(frame));
    return new PFBuilder<Throwable, Graph<SourceShape<ByteString>, NotUsed>>()
        .match(Downed.class, e -> last)
        .build();
  }

  private void leave() {
    if (inFlight.decrementAndGet() == 0 && closed) {
      empty.complete(Done.getInstance());
    }
  }

  /** From now on every new request is refused with 503 and {@code Connection: close}. */
  public void close() {
    closed = true;
    if (inFlight.get() == 0) {
      empty.complete(Done.getInstance());
    }
  }

  /**
   * The node was downed: ends every request in flight now, as the class comment says, and refuses
   * new ones.
   */
  public void abort() {
    aborted = true;
    close();
    for (Runnable cut : List.copyOf(cuts)) {
      cut.run();
    }
    downed.abort(new Downed());
  }

  /** Requests in flight now. */
  public int inFlight() {
    return inFlight.get();
  }

  /**
   * Completes when no request is in flight any more (after {@link #close()}), or after {@code
   * grace}, whichever comes first.
   */
  public CompletionStage<Done> drained(Duration grace) {
    return empty
        .copy()
        .completeOnTimeout(Done.getInstance(), grace.toMillis(), TimeUnit.MILLISECONDS);
  }

  private static HttpResponse refused() {
    return HttpResponse.create()
        .withStatus(StatusCodes.SERVICE_UNAVAILABLE)
        .addHeader(Connection.create("close"))
        .withEntity(
            HttpEntities.create(
                ContentTypes.APPLICATION_JSON,
                "{\"error\":{\"message\":\"This ingress is shutting down; retry on another.\","
                    + "\"type\":\"server_error\",\"param\":null,\"code\":\"draining\"}}"));
  }

  private static HttpResponse downed(boolean anthropic) {
    return HttpResponse.create()
        .withStatus(StatusCodes.SERVICE_UNAVAILABLE)
        .addHeader(Connection.create("close"))
        .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, downedJson(anthropic)));
  }

  private static String downedJson(boolean anthropic) {
    return anthropic
        ? "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\""
            + DOWNED
            + "\"}}"
        : "{\"error\":{\"message\":\""
            + DOWNED
            + "\",\"type\":\"server_error\",\"param\":null,\"code\":\"ingress_downed\"}}";
  }

  /** The failure {@link #abort()} cuts streamed bodies with. */
  private static final class Downed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Downed() {
      super(DOWNED, null, false, false);
    }
  }
}

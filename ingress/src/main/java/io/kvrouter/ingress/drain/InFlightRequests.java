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
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.MediaTypes;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.Connection;
import org.apache.pekko.japi.function.Function;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

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
 * <p>Cost: one atomic increment and decrement per request, one set entry while it is in flight,
 * three stages on streamed entities.
 */
public final class InFlightRequests {

  private static final String DOWNED =
      "This ingress was removed from the cluster; retry on another.";

  private final Materializer materializer;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final CompletableFuture<Done> empty = new CompletableFuture<>();
  private final Set<Runnable> cuts = ConcurrentHashMap.newKeySet();
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
    boolean events = entity.getContentType().mediaType().equals(MediaTypes.TEXT_EVENT_STREAM);
    StreamCut cut = new StreamCut(events, anthropic);
    cuts.add(cut);
    if (aborted) {
      cut.run();
    }
    return response.transformEntityDataBytes(
        Flow.<ByteString>create()
            .merge(Source.completionStage(cut.ending), true)
            .takeWhile(bytes -> bytes != cut.frame, true)
            .watchTermination(
                (mat, done) -> {
                  SameThread.of(done)
                      .whenComplete(
                          (d, e) -> {
                            cuts.remove(cut);
                            leave();
                          });
                  return mat;
                }));
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

  /**
   * Ends one streamed body: an event stream with an error event (the body's stream takes {@link
   * #ending} in, and ends after {@link #frame}), any other by failing it.
   */
  private static final class StreamCut implements Runnable {
    final CompletableFuture<ByteString> ending = new CompletableFuture<>();
    final ByteString frame;
    private final boolean events;

    StreamCut(boolean events, boolean anthropic) {
      this.events = events;
      this.frame =
          ByteString.fromString(
              anthropic
                  ? "event: error\ndata: " + downedJson(true) + "\n\n"
                  : "data: " + downedJson(false) + "\n\ndata: [DONE]\n\n");
    }

    @Override
    public void run() {
      if (events) {
        ending.complete(frame);
      } else {
        ending.completeExceptionally(new IllegalStateException(DOWNED));
      }
    }
  }
}

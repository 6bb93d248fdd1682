package io.kvrouter.ingress.drain;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.Done;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.Connection;
import org.apache.pekko.japi.function.Function;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Flow;
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
 * <p>Cost: one atomic increment and decrement per request, one stage on streamed entities.
 */
public final class InFlightRequests {

  private final Materializer materializer;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final CompletableFuture<Done> empty = new CompletableFuture<>();
  private volatile boolean closed;

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
      CompletionStage<HttpResponse> response;
      try {
        response = inner.apply(request);
      } catch (Exception e) {
        leave();
        throw e;
      }
      return response.handle(
          (r, e) -> {
            if (e != null) {
              leave();
              throw e instanceof RuntimeException re ? re : new IllegalStateException(e);
            }
            return counted(r);
          });
    };
  }

  private HttpResponse counted(HttpResponse response) {
    HttpEntity entity = response.entity();
    if (entity.isKnownEmpty() || entity instanceof HttpEntity.Strict) {
      leave();
      return response;
    }
    return response.transformEntityDataBytes(
        Flow.<ByteString>create()
            .watchTermination(
                (mat, done) -> {
                  done.whenComplete((d, e) -> leave());
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
}

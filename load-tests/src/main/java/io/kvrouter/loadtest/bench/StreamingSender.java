package io.kvrouter.loadtest.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntUnaryOperator;
import java.util.function.LongSupplier;

/**
 * Sends one streaming request with the JDK HTTP client and returns its {@link RequestOutcome}
 * future, which always completes: at {@code [DONE]}, at a failure, or at the request timeout (a
 * timer cancels the exchange; the JDK's own {@link HttpRequest.Builder#timeout} only covers the
 * wait for the response headers, not a stream that stalls later).
 *
 * <p>{@link #send} does not block on the network: it hands the (prepared) request to {@link
 * HttpClient#sendAsync}; the body is read line by line on the client's executor. Thread- safe. Cost
 * per request: the body bytes, one timer task, one {@link SseStreamSubscriber}.
 *
 * <p>With a {@code reroute} (the run follows readiness, as a load balancer does), a request whose
 * connection could not even be opened goes to the target {@code reroute} names instead, at most
 * once per other target: no server accepted it, so nothing is resent that anyone received. This is
 * what Envoy's {@code retry_on: connect-failure} and nginx's {@code proxy_next_upstream error} do
 * for a backend whose listener closed between two health checks. Each such resend is counted
 * ({@link #connectRetries}).
 */
final class StreamingSender {

  private final HttpClient client;
  private final List<URI> endpoints;
  private final BenchConfig config;
  private final String model;
  private final ScheduledExecutorService timer;
  private final LongSupplier clock;
  private final IntUnaryOperator reroute;
  private final AtomicInteger connectRetries = new AtomicInteger();
  private final Map<SseStreamSubscriber, CompletableFuture<?>> live = new ConcurrentHashMap<>();

  /**
   * @param clock nanoseconds since the start of the run
   */
  StreamingSender(
      HttpClient client,
      BenchConfig config,
      String model,
      ScheduledExecutorService timer,
      LongSupplier clock) {
    this(client, config, model, timer, clock, null);
  }

  /**
   * @param reroute the target to try after a connection to the given one failed, or the same target
   *     (or a negative number) for none; {@code null} never reroutes
   */
  StreamingSender(
      HttpClient client,
      BenchConfig config,
      String model,
      ScheduledExecutorService timer,
      LongSupplier clock,
      IntUnaryOperator reroute) {
    this.reroute = reroute;
    this.client = client;
    this.config = config;
    this.model = model;
    this.timer = timer;
    this.clock = clock;
    this.endpoints = config.targets().stream().map(config.endpoint()::under).toList();
  }

  /**
   * A request ready to go: its body encoded ahead of its due time, so the encoding (O(prompt)) is
   * not on the path between the due time and the send. {@code failure} is set instead of {@code
   * body} when the request cannot be encoded.
   */
  record Prepared(BenchRequest request, byte[] body, IllegalArgumentException failure) {}

  /** Encodes {@code request}; never throws for a prompt that does not fit the endpoint. */
  Prepared prepare(BenchRequest request) {
    try {
      return new Prepared(
          request,
          RequestBodyEncoder.encode(
              request,
              request.model() != null ? request.model() : model,
              config.endpoint(),
              config.ignoreEos()),
          null);
    } catch (IllegalArgumentException e) {
      return new Prepared(request, null, e);
    }
  }

  /**
   * Encodes and sends {@code request} to target {@code target} now; {@code intendedNanos} is its
   * due time.
   */
  CompletableFuture<RequestOutcome> send(
      int index, int target, BenchRequest request, long intendedNanos) {
    return send(index, target, prepare(request), intendedNanos);
  }

  /**
   * Sends a prepared request to target {@code target} now; {@code intendedNanos} is its due time.
   */
  CompletableFuture<RequestOutcome> send(
      int index, int target, Prepared prepared, long intendedNanos) {
    return send(index, target, prepared, intendedNanos, endpoints.size() - 1);
  }

  /** Requests resent to another target because their connection could not be opened. */
  int connectRetries() {
    return connectRetries.get();
  }

  private CompletableFuture<RequestOutcome> send(
      int index, int target, Prepared prepared, long intendedNanos, int reroutesLeft) {
    long sent = clock.getAsLong();
    BenchRequest request = prepared.request();
    SseStreamSubscriber subscriber =
        new SseStreamSubscriber(index, target, request.group(), intendedNanos, sent, clock);
    if (prepared.failure() != null) {
      subscriber.failedBeforeResponse(prepared.failure());
      return subscriber.outcome();
    }
    byte[] body = prepared.body();
    // No HttpRequest timeout: it would race the timer below and only covers the headers.
    HttpRequest.Builder builder =
        HttpRequest.newBuilder(endpoints.get(target))
            .header("Content-Type", "application/json")
            .header("Accept", "text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    if (config.apiKey() != null) {
      builder.header("Authorization", "Bearer " + config.apiKey());
    }
    HttpResponse.BodyHandler<Void> handler =
        info -> {
          subscriber.responseStarted(info.statusCode());
          return HttpResponse.BodySubscribers.fromLineSubscriber(
              subscriber, s -> null, StandardCharsets.UTF_8, null);
        };
    CompletableFuture<HttpResponse<Void>> exchange = client.sendAsync(builder.build(), handler);
    live.put(subscriber, exchange);
    CompletableFuture<RequestOutcome> result = new CompletableFuture<>();
    AtomicBoolean rerouted = new AtomicBoolean();
    exchange.whenComplete(
        (response, failure) -> {
          int next = failure != null && reroutesLeft > 0 ? rerouteAfter(target, failure) : -1;
          if (next >= 0) {
            connectRetries.incrementAndGet();
            rerouted.set(true);
            subscriber.cancel();
            send(index, next, prepared, intendedNanos, reroutesLeft - 1)
                .whenComplete((o, t) -> result.complete(o));
          } else if (failure != null) {
            subscriber.failedBeforeResponse(failure);
          }
        });
    ScheduledFuture<?> deadline =
        timer.schedule(
            () -> {
              subscriber.timeOut();
              exchange.cancel(true);
            },
            config.requestTimeout().toNanos(),
            TimeUnit.NANOSECONDS);
    subscriber
        .outcome()
        .whenComplete(
            (o, t) -> {
              deadline.cancel(false);
              live.remove(subscriber);
              if (!rerouted.get()) {
                result.complete(o);
              }
            });
    return result;
  }

  private int rerouteAfter(int target, Throwable failure) {
    if (reroute == null || !connectFailed(failure)) {
      return -1;
    }
    int next = reroute.applyAsInt(target);
    return next == target ? -1 : next;
  }

  private static boolean connectFailed(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof java.net.ConnectException) {
        return true;
      }
    }
    return false;
  }

  /** Ends every request in flight as CANCELLED and aborts its exchange. */
  void cancelAll() {
    for (Map.Entry<SseStreamSubscriber, CompletableFuture<?>> e : live.entrySet()) {
      e.getKey().cancel();
      e.getValue().cancel(true);
    }
  }
}

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
 */
final class StreamingSender {

  private final HttpClient client;
  private final List<URI> endpoints;
  private final BenchConfig config;
  private final String model;
  private final ScheduledExecutorService timer;
  private final LongSupplier clock;
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
    exchange.whenComplete(
        (response, failure) -> {
          if (failure != null) {
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
            });
    return subscriber.outcome();
  }

  /** Ends every request in flight as CANCELLED and aborts its exchange. */
  void cancelAll() {
    for (Map.Entry<SseStreamSubscriber, CompletableFuture<?>> e : live.entrySet()) {
      e.getKey().cancel();
      e.getValue().cancel(true);
    }
  }
}

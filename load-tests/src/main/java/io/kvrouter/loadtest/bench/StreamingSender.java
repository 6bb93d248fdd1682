package io.kvrouter.loadtest.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Sends one streaming request with the JDK HTTP client and returns its {@link RequestOutcome}
 * future, which always completes: at {@code [DONE]}, at a failure, or at the request timeout
 * (a timer cancels the exchange; the JDK's own {@link HttpRequest.Builder#timeout} only covers
 * the wait for the response headers, not a stream that stalls later).
 *
 * <p>{@link #send} does not block on the network: it encodes the body and hands the request to
 * {@link HttpClient#sendAsync}; the body is read line by line on the client's executor. Thread-
 * safe. Cost per request: the body bytes, one timer task, one {@link SseStreamSubscriber}.
 */
final class StreamingSender {

    private final HttpClient client;
    private final List<URI> endpoints;
    private final BenchConfig config;
    private final String model;
    private final ScheduledExecutorService timer;
    private final LongSupplier clock;

    /**
     * @param clock nanoseconds since the start of the run
     */
    StreamingSender(HttpClient client, BenchConfig config, String model, ScheduledExecutorService timer,
                    LongSupplier clock) {
        this.client = client;
        this.config = config;
        this.model = model;
        this.timer = timer;
        this.clock = clock;
        this.endpoints = config.targets().stream().map(config.endpoint()::under).toList();
    }

    /** Sends {@code request} to target {@code target} now; {@code intendedNanos} is its due time. */
    CompletableFuture<RequestOutcome> send(int index, int target, BenchRequest request, long intendedNanos) {
        long sent = clock.getAsLong();
        SseStreamSubscriber subscriber = new SseStreamSubscriber(index, target, request.group(), intendedNanos, sent,
                clock);
        byte[] body;
        try {
            body = RequestBodyEncoder.encode(request, request.model() != null ? request.model() : model,
                    config.endpoint(), config.ignoreEos());
        } catch (IllegalArgumentException e) {
            subscriber.failedBeforeResponse(e);
            return subscriber.outcome();
        }
        HttpRequest.Builder builder = HttpRequest.newBuilder(endpoints.get(target))
                .timeout(config.requestTimeout())
                .header("Content-Type", "application/json")
                .header("Accept", "text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (config.apiKey() != null) {
            builder.header("Authorization", "Bearer " + config.apiKey());
        }
        HttpResponse.BodyHandler<Void> handler = info -> {
            subscriber.responseStarted(info.statusCode());
            return HttpResponse.BodySubscribers.fromLineSubscriber(subscriber, s -> null,
                    StandardCharsets.UTF_8, null);
        };
        CompletableFuture<HttpResponse<Void>> exchange = client.sendAsync(builder.build(), handler);
        exchange.whenComplete((response, failure) -> {
            if (failure != null) {
                subscriber.failedBeforeResponse(failure);
            }
        });
        ScheduledFuture<?> deadline = timer.schedule(() -> {
            subscriber.timeOut();
            exchange.cancel(true);
        }, config.requestTimeout().toNanos(), TimeUnit.NANOSECONDS);
        subscriber.outcome().whenComplete((o, t) -> deadline.cancel(false));
        return subscriber.outcome();
    }
}

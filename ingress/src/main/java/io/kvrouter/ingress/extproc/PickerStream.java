package io.kvrouter.ingress.extproc;

import com.google.protobuf.ByteString;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.service.ext_proc.v3.BodyMutation;
import io.envoyproxy.envoy.service.ext_proc.v3.BodyResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.CommonResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.HeadersResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.ImmediateResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.StreamedBodyResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.TrailersResponse;
import io.envoyproxy.envoy.type.v3.HttpStatus;
import io.grpc.stub.StreamObserver;
import io.kvrouter.ingress.api.ApiError;
import io.kvrouter.ingress.api.ApiException;
import io.kvrouter.ingress.api.Endpoint;
import io.kvrouter.ingress.api.TokenizedPrompt;
import io.kvrouter.ingress.routing.ReplicaQuery;
import io.kvrouter.ingress.routing.RouteOutcome;
import io.kvrouter.ingress.routing.Router;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One HTTP request as Envoy's ext_proc filter streams it, in the full-duplex streamed body mode the
 * Gateway API Inference Extension's endpoint-picker protocol asks for (GIE v1.6.0,
 * docs/proposals/004-endpoint-picker-protocol): request headers, then body chunks; once the body is
 * complete kvrouter decides as its HTTP ingress would (same validation, template, tokenizer,
 * select-and-reserve) and answers the headers with {@code x-gateway-destination-endpoint: ip:port}
 * plus the same value in dynamic metadata {@code envoy.lb} ({@link DestinationReplies}), then hands
 * the body back unchanged. The response headers mark the prefill done; the end of the response body
 * (or of the stream, whichever comes first) releases the reservation, exactly once.
 *
 * <p>gRPC delivers one stream's messages one at a time on the Netty event loop of Envoy's
 * connection ({@link ExtProcServer} runs the service on gRPC's direct executor): headers, body
 * chunks and the response phase cost no thread hand-off, and the one heavy step, decoding and
 * tokenizing the body, goes to the tokenizer's pool ({@link PromptDecoder#decodeOnPool}). The
 * routing decision completes on yet another thread, so writes to Envoy are serialised on the
 * outbound observer. A stream that ends (cancelled, or half-closed) while its request is decided
 * releases the reservation the decision then brings.
 */
final class PickerStream implements StreamObserver<ProcessingRequest> {

  /** Lets the request's trailers pass (the replies that never change are built once). */
  private static final ProcessingResponse REQUEST_TRAILERS_PASS =
      ProcessingResponse.newBuilder()
          .setRequestTrailers(TrailersResponse.getDefaultInstance())
          .build();

  /** Lets the response's headers pass. */
  private static final ProcessingResponse RESPONSE_HEADERS_PASS =
      ProcessingResponse.newBuilder()
          .setResponseHeaders(HeadersResponse.getDefaultInstance())
          .build();

  /** Lets the response's trailers pass. */
  private static final ProcessingResponse RESPONSE_TRAILERS_PASS =
      ProcessingResponse.newBuilder()
          .setResponseTrailers(TrailersResponse.getDefaultInstance())
          .build();

  private final StreamObserver<ProcessingResponse> out;
  private final DestinationReplies replies;
  private final PromptDecoder decoder;
  private final Router router;
  private final long maxBodyBytes;
  private final String requestId;
  private final AtomicBoolean released = new AtomicBoolean();
  private final AtomicBoolean prefilled = new AtomicBoolean();
  private ByteString body = ByteString.EMPTY;
  private Endpoint endpoint;
  private volatile String reservationId;
  private volatile boolean done;
  private volatile boolean ended;

  PickerStream(
      StreamObserver<ProcessingResponse> out,
      DestinationReplies replies,
      PromptDecoder decoder,
      Router router,
      long maxBodyBytes,
      String requestId) {
    this.out = out;
    this.replies = replies;
    this.decoder = decoder;
    this.router = router;
    this.maxBodyBytes = maxBodyBytes;
    this.requestId = requestId;
  }

  @Override
  public void onNext(ProcessingRequest request) {
    switch (request.getRequestCase()) {
      case REQUEST_HEADERS -> onRequestHeaders(request.getRequestHeaders());
      case REQUEST_BODY -> onRequestBody(request.getRequestBody());
      case REQUEST_TRAILERS -> send(REQUEST_TRAILERS_PASS);
      case RESPONSE_HEADERS -> {
        if (reservationId != null && prefilled.compareAndSet(false, true)) {
          router.prefillCompleted(reservationId);
        }
        send(RESPONSE_HEADERS_PASS);
      }
      case RESPONSE_BODY -> {
        HttpBody chunk = request.getResponseBody();
        send(
            ProcessingResponse.newBuilder()
                .setResponseBody(streamedBody(chunk.getBody(), chunk.getEndOfStream()))
                .build());
        if (chunk.getEndOfStream()) {
          release();
        }
      }
      case RESPONSE_TRAILERS -> {
        send(RESPONSE_TRAILERS_PASS);
        release();
      }
      default -> {}
    }
  }

  private void onRequestHeaders(HttpHeaders headers) {
    String path = null;
    for (HeaderValue h : headers.getHeaders().getHeadersList()) {
      if (h.getKey().equals(":path")) {
        path = h.getRawValue().isEmpty() ? h.getValue() : h.getRawValue().toStringUtf8();
      }
    }
    endpoint = PromptDecoder.endpoint(path);
    if (endpoint == null) {
      immediate(
          new ApiError(
              404,
              "The endpoint picker routes POST /v1/completions and /v1/chat/completions, not "
                  + path
                  + ".",
              "invalid_request_error",
              null,
              "not_found",
              0));
    } else if (headers.getEndOfStream()) {
      immediate(ApiError.invalid("The request has no body to route.", null, "empty_body"));
    }
  }

  private void onRequestBody(HttpBody chunk) {
    if (done) {
      return;
    }
    body = body.concat(chunk.getBody()); // a rope of the chunks, not a copy
    if (body.size() > maxBodyBytes) {
      immediate(ApiError.tooLarge(maxBodyBytes));
      return;
    }
    if (chunk.getEndOfStream()) {
      pick(body);
    }
  }

  private void pick(ByteString whole) {
    body = null;
    decoder
        .decodeOnPool(endpoint, whole)
        .thenCompose(
            decoded ->
                router.selectAndReserve(
                    new ReplicaQuery(
                            requestId,
                            decoded.request().model(),
                            decoded.tokens(),
                            decoded.request().maxTokens(),
                            Set.of())
                        .withImages(TokenizedPrompt.images(decoded.request()))))
        .whenComplete(
            (outcome, error) -> {
              if (error != null) {
                Throwable cause = error instanceof CompletionException ? error.getCause() : error;
                immediate(
                    cause instanceof ApiException bad
                        ? bad.error()
                        : ApiError.unavailable("routing failed: " + cause, 1));
              } else if (outcome instanceof RouteOutcome.Routed routed) {
                routed(routed, whole);
              } else if (outcome instanceof RouteOutcome.Busy busy) {
                immediate(ApiError.overloaded(busy.reason(), 1));
              } else {
                immediate(ApiError.unavailable(((RouteOutcome.NoReplica) outcome).reason(), 2));
              }
            });
  }

  private void routed(RouteOutcome.Routed routed, ByteString whole) {
    reservationId = routed.reservationId();
    if (ended) { // Envoy gave up on the request while it was decided: nothing will end it
      release();
      return;
    }
    send(replies.to(routed.target().baseUrl()));
    send(ProcessingResponse.newBuilder().setRequestBody(streamedBody(whole, true)).build());
  }

  private static BodyResponse streamedBody(ByteString bytes, boolean endOfStream) {
    return BodyResponse.newBuilder()
        .setResponse(
            CommonResponse.newBuilder()
                .setBodyMutation(
                    BodyMutation.newBuilder()
                        .setStreamedResponse(
                            StreamedBodyResponse.newBuilder()
                                .setBody(bytes)
                                .setEndOfStream(endOfStream))))
        .build();
  }

  /** Answers Envoy's client directly (no upstream): the error in OpenAI's form. */
  private void immediate(ApiError error) {
    done = true;
    send(
        ProcessingResponse.newBuilder()
            .setImmediateResponse(
                ImmediateResponse.newBuilder()
                    .setStatus(HttpStatus.newBuilder().setCodeValue(error.status()))
                    .setBody(ByteString.copyFromUtf8(error.toOpenAi().toString()))
                    .setDetails("kvrouter: " + error.message()))
            .build());
  }

  private void send(ProcessingResponse response) {
    synchronized (out) {
      out.onNext(response);
    }
  }

  private void release() {
    String id = reservationId;
    if (id != null && released.compareAndSet(false, true)) {
      router.released(id);
    }
  }

  @Override
  public void onError(Throwable t) {
    ended = true;
    release();
  }

  @Override
  public void onCompleted() {
    ended = true;
    release();
    synchronized (out) {
      out.onCompleted();
    }
  }
}

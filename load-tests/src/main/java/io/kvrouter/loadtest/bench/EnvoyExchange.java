package io.kvrouter.loadtest.bench;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProtocolConfiguration;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CompletableFuture;

/**
 * Envoy's side of one HTTP request's ext_proc stream to an endpoint picker, in the processing mode
 * the Gateway API Inference Extension configures (request and response headers SEND, request and
 * response bodies FULL_DUPLEX_STREAMED): the request headers ({@code end_of_stream} false, and the
 * body modes in {@code protocol_config}, which Envoy sends on a stream's first message), the body
 * in chunks of at most {@code chunkBytes}, the last with {@code end_of_stream}; then, once the
 * picker has answered the headers (with {@code x-gateway-destination-endpoint}) and handed the body
 * back, the upstream's response headers and one response body chunk with {@code end_of_stream}, as
 * Envoy streams them after the upstream answered; then it half-closes the stream, as Envoy does
 * when the HTTP request ends. The upstream call itself is left out: no engine is contacted.
 *
 * <p>The decision time runs from just before the headers message is sent to the arrival of the
 * reply to it, which carries the destination (or of an immediate response, which ends the request
 * with an error). {@link #result()} completes once the picker has closed its side, or with the
 * stream's error.
 *
 * <p>Sends are serialised on the exchange (the request goes out on the caller's thread, the
 * response phase on gRPC's); replies arrive one at a time. Cost: one gRPC stream and six messages
 * out, four in; the body is wrapped, not copied.
 */
final class EnvoyExchange implements StreamObserver<ProcessingResponse> {

  /** The header that names the picked endpoint (GIE endpoint-picker protocol). */
  static final String DESTINATION = "x-gateway-destination-endpoint";

  private static final ByteString RESPONSE_BODY =
      ByteString.copyFromUtf8(
          "{\"id\":\"cmpl-bench\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,"
              + "\"message\":{\"role\":\"assistant\",\"content\":\"ok\"},\"finish_reason\":"
              + "\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}}");

  /** What one exchange came to: the destination and decision time, or why it failed. */
  record Outcome(String destination, long decisionNanos, String error) {
    boolean ok() {
      return error == null;
    }
  }

  private final CompletableFuture<Outcome> result = new CompletableFuture<>();
  private StreamObserver<ProcessingRequest> out;
  private long sentNanos;
  private String destination;
  private long decisionNanos;
  private String error;
  private int repliesAwaited;

  private EnvoyExchange() {}

  /**
   * Opens a stream on {@code stub} and sends the request: headers for a POST to {@code path}, then
   * {@code body} in chunks of at most {@code chunkBytes}.
   */
  static EnvoyExchange start(
      ExternalProcessorGrpc.ExternalProcessorStub stub, String path, byte[] body, int chunkBytes) {
    if (chunkBytes < 1 || body.length == 0) {
      throw new IllegalArgumentException("need a body and chunkBytes >= 1");
    }
    EnvoyExchange exchange = new EnvoyExchange();
    synchronized (exchange) {
      exchange.out = stub.process(exchange);
      exchange.sentNanos = System.nanoTime();
      exchange.out.onNext(requestHeaders(path, body.length));
      for (int off = 0; off < body.length; off += chunkBytes) {
        int n = Math.min(chunkBytes, body.length - off);
        exchange.out.onNext(
            ProcessingRequest.newBuilder()
                .setRequestBody(
                    HttpBody.newBuilder()
                        .setBody(UnsafeByteOperations.unsafeWrap(body, off, n))
                        .setEndOfStream(off + n == body.length))
                .build());
      }
    }
    return exchange;
  }

  /** Completes when the picker has closed the stream. */
  CompletableFuture<Outcome> result() {
    return result;
  }

  @Override
  public synchronized void onNext(ProcessingResponse reply) {
    switch (reply.getResponseCase()) {
      case REQUEST_HEADERS -> {
        decisionNanos = System.nanoTime() - sentNanos;
        destination = destination(reply);
        if (destination == null) {
          error = "no " + DESTINATION + " header";
          out.onCompleted();
        }
      }
      case REQUEST_BODY -> {
        if (destination != null) {
          respond();
        }
      }
      case IMMEDIATE_RESPONSE -> {
        decisionNanos = System.nanoTime() - sentNanos;
        error = "immediate " + reply.getImmediateResponse().getStatus().getCodeValue();
        out.onCompleted();
      }
      case RESPONSE_HEADERS, RESPONSE_BODY -> {
        if (--repliesAwaited == 0) {
          out.onCompleted();
        }
      }
      default -> {
        error = "unexpected reply " + reply.getResponseCase();
        out.onCompleted();
      }
    }
  }

  /** The upstream's answer as Envoy streams it through the processor. */
  private void respond() {
    repliesAwaited = 2;
    out.onNext(
        ProcessingRequest.newBuilder()
            .setResponseHeaders(
                HttpHeaders.newBuilder()
                    .setHeaders(
                        HeaderMap.newBuilder()
                            .addHeaders(header(":status", "200"))
                            .addHeaders(header("content-type", "application/json"))))
            .build());
    out.onNext(
        ProcessingRequest.newBuilder()
            .setResponseBody(HttpBody.newBuilder().setBody(RESPONSE_BODY).setEndOfStream(true))
            .build());
  }

  /** Gives up on the stream (Envoy's ext_proc timeout): cancels it, which ends {@link #result}. */
  synchronized void cancel() {
    out.onError(Status.CANCELLED.withDescription("timed out").asRuntimeException());
  }

  @Override
  public synchronized void onError(Throwable t) {
    result.complete(new Outcome(destination, decisionNanos, "stream error " + t));
  }

  @Override
  public synchronized void onCompleted() {
    if (error == null && (destination == null || repliesAwaited != 0)) {
      error = "stream ended early";
    }
    result.complete(new Outcome(destination, decisionNanos, error));
  }

  private static ProcessingRequest requestHeaders(String path, int contentLength) {
    return ProcessingRequest.newBuilder()
        .setProtocolConfig(
            ProtocolConfiguration.newBuilder()
                .setRequestBodyMode(ProcessingMode.BodySendMode.FULL_DUPLEX_STREAMED)
                .setResponseBodyMode(ProcessingMode.BodySendMode.FULL_DUPLEX_STREAMED))
        .setRequestHeaders(
            HttpHeaders.newBuilder()
                .setHeaders(
                    HeaderMap.newBuilder()
                        .addHeaders(header(":method", "POST"))
                        .addHeaders(header(":scheme", "http"))
                        .addHeaders(header(":authority", "inference-gateway"))
                        .addHeaders(header(":path", path))
                        .addHeaders(header("content-type", "application/json"))
                        .addHeaders(header("content-length", Integer.toString(contentLength))))
                .setEndOfStream(false))
        .build();
  }

  /** The destination the picker set on the request headers, or null. */
  private static String destination(ProcessingResponse reply) {
    for (HeaderValueOption option :
        reply.getRequestHeaders().getResponse().getHeaderMutation().getSetHeadersList()) {
      HeaderValue h = option.getHeader();
      if (h.getKey().equals(DESTINATION)) {
        return h.getRawValue().isEmpty() ? h.getValue() : h.getRawValue().toStringUtf8();
      }
    }
    return null;
  }

  private static HeaderValue header(String key, String value) {
    return HeaderValue.newBuilder().setKey(key).setRawValue(ByteString.copyFromUtf8(value)).build();
  }
}

package io.kvrouter.ingress.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.ingress.api.ApiError;
import io.kvrouter.ingress.api.ApiException;
import io.kvrouter.ingress.api.BodyReader;
import io.kvrouter.ingress.api.CountTokens;
import io.kvrouter.ingress.api.Endpoint;
import io.kvrouter.ingress.api.InferenceRequest;
import io.kvrouter.ingress.api.RequestTokenizer;
import io.kvrouter.ingress.api.RequestValidator;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.program.ProgramFront;
import io.kvrouter.ingress.program.ProgramHints;
import io.kvrouter.ingress.proxy.ProxyService;
import io.kvrouter.ingress.stage.SameThread;
import io.kvrouter.ingress.tokenize.PromptEncoder;
import io.kvrouter.ingress.tracing.RequestTrace;
import io.kvrouter.ingress.traffic.IngressTraffic;
import io.kvrouter.ingress.traffic.LimitVerdict;
import io.kvrouter.ingress.traffic.RequestTraffic;
import io.kvrouter.ingress.traffic.Tenant;
import io.kvrouter.ingress.traffic.TrafficHeaders;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.RetryAfter;
import org.apache.pekko.http.scaladsl.model.EntityStreamException;
import org.apache.pekko.http.scaladsl.model.EntityStreamSizeException;
import org.apache.pekko.stream.Materializer;

/**
 * The request path of one inference call: authenticate its tenant (401 before the body is read),
 * read the body (size limit, strict UTF-8, JSON), validate, tokenize with the model's template (a
 * short body at once, a long one on the {@link PromptEncoder}'s pool, re-using the tokens of a
 * conversation's earlier turns), check the context length, count it against its tenant's limits
 * (429 naming the limit), then route and forward through the {@link ProxyService} with its
 * priority, session and TTFT target. Every failure becomes the protocol's error object with its
 * status; nothing reaches a replica, and no reservation is made, before validation passed.
 * Responses of a tenant with limits carry OpenAI's {@code x-ratelimit-*} headers; the request's
 * trace spans it all.
 */
public final class InferenceHandler {

  private final IngressSettings settings;
  private final BodyReader reader;
  private final RequestValidator validator;
  private final ProxyService proxy;
  private final IngressMetrics metrics;
  private final Materializer materializer;
  private final RequestTokenizer tokenizer;
  private final IngressTraffic traffic;
  private final ProgramFront programs;

  public InferenceHandler(
      IngressSettings settings,
      ObjectMapper mapper,
      ProxyService proxy,
      IngressMetrics metrics,
      Materializer materializer,
      RequestTokenizer tokenizer,
      IngressTraffic traffic,
      ProgramFront programs) {
    this.traffic = traffic;
    this.programs = programs;
    this.settings = settings;
    this.reader = new BodyReader(mapper);
    this.validator = new RequestValidator();
    this.proxy = proxy;
    this.metrics = metrics;
    this.materializer = materializer;
    this.tokenizer = tokenizer;
  }

  /** A result and the limit verdict whose headers go with it (null for none). */
  private record Reply(ProxyService.Result result, LimitVerdict verdict) {}

  /** Handles one request to {@code endpoint}. */
  public CompletionStage<HttpResponse> handle(Endpoint endpoint, HttpRequest http) {
    long arrival = System.nanoTime();
    TrafficHeaders headers = TrafficHeaders.of(http, traffic.settings());
    RequestTrace trace =
        traffic
            .tracing()
            .start("POST " + path(endpoint), headers.traceparent(), headers.tracestate());
    String[] model = {null};
    ProgramHints hints;
    try {
      hints = programs.hints(http);
    } catch (ApiException e) {
      http.entity().discardBytes(materializer);
      return CompletableFuture.completedFuture(traced(error(endpoint, null, e.error()), trace));
    }
    return admitted(endpoint, http.entity(), headers, hints, trace, arrival, model)
        .thenApply(reply -> respond(endpoint, model[0], reply))
        .exceptionally(e -> error(endpoint, model[0], toApiError(e)))
        .thenApply(response -> traced(response, trace));
  }

  /** Ends the request's span with the response, or with its stream's last byte. */
  private static HttpResponse traced(HttpResponse response, RequestTrace trace) {
    int status = response.status().intValue();
    if (!trace.recording() || !response.entity().isChunked()) {
      trace.end(status);
      return response;
    }
    HttpEntity entity = response.entity();
    return response.withEntity(
        HttpEntities.create(
            entity.getContentType(),
            entity
                .getDataBytes()
                .watchTermination(
                    (mat, done) -> {
                      SameThread.of(done).whenComplete((d, e) -> trace.end(status));
                      return mat;
                    })));
  }

  /**
   * The whole body. A body that arrived in one piece within the size limit is used as it is:
   * Pekko's {@code toStrict} on an entity that is already strict still runs a stream (a
   * materialisation, an actor created and stopped), a visible share of the HTTP dispatcher's CPU
   * per request.
   */
  private CompletionStage<HttpEntity.Strict> strict(HttpEntity entity) {
    if (entity instanceof HttpEntity.Strict s && s.getData().size() <= settings.maxBodyBytes()) {
      return CompletableFuture.completedFuture(s);
    }
    return SameThread.of(
        entity
            .withSizeLimit(settings.maxBodyBytes())
            .toStrict(
                settings.bodyReadTimeout().toMillis(), settings.maxBodyBytes(), materializer));
  }

  private CompletionStage<Reply> admitted(
      Endpoint endpoint,
      HttpEntity entity,
      TrafficHeaders headers,
      ProgramHints hints,
      RequestTrace trace,
      long arrival,
      String[] model) {
    Tenant tenant;
    try {
      tenant = traffic.gate().authenticate(headers);
    } catch (ApiException e) {
      entity.discardBytes(materializer);
      return CompletableFuture.failedFuture(e);
    }
    trace.set("kvrouter.tenant", tenant.id());
    return strict(entity)
        .exceptionally(InferenceHandler::bodyNotReceived)
        .thenCompose(
            strict -> {
              byte[] bytes = strict.getData().toArray();
              JsonNode json = reader.read(bytes);
              InferenceRequest request =
                  programs.identify(
                      hints,
                      traffic
                          .gate()
                          .withSession(
                              headers, validator.validate(endpoint, json).withSent(json, bytes)));
              model[0] = request.model();
              trace.set("gen_ai.request.model", request.model());
              RequestTrace.Phase tokenizing = trace.phase("tokenize");
              return tokenizer
                  .tokenize(request, bytes.length)
                  .whenComplete(
                      (tokens, e) -> {
                        if (e == null) {
                          tokenizing.set("kvrouter.prompt_tokens", tokens.length).end();
                        } else {
                          tokenizing.fail(String.valueOf(e));
                        }
                      })
                  .thenCompose(
                      tokens -> {
                        if (endpoint == Endpoint.COUNT_TOKENS) {
                          return CompletableFuture.completedFuture(
                              new Reply(
                                  new ProxyService.Result.Answered(
                                      HttpResponse.create()
                                          .withEntity(
                                              HttpEntities.create(
                                                  ContentTypes.APPLICATION_JSON,
                                                  CountTokens.body(tokens.length).toString()))),
                                  null));
                        }
                        RequestTraffic described =
                            programs.describe(
                                traffic
                                    .gate()
                                    .describe(
                                        headers, request, tenant, tokens.length, arrival, trace),
                                hints,
                                request,
                                tokens.length);
                        trace.set("kvrouter.priority", described.priority());
                        return traffic
                            .gate()
                            .acquire(described)
                            .thenCompose(
                                verdict ->
                                    verdict.allowed()
                                        ? programs
                                            .around(
                                                endpoint,
                                                json,
                                                request,
                                                described,
                                                hints,
                                                () ->
                                                    proxy.forward(
                                                        request,
                                                        tokens,
                                                        "req-" + UUID.randomUUID(),
                                                        described))
                                            .thenApply(r -> new Reply(r, verdict))
                                        : CompletableFuture.completedFuture(
                                            new Reply(
                                                new ProxyService.Result.Failed(verdict.error()),
                                                verdict)));
                      });
            });
  }

  private HttpResponse respond(Endpoint endpoint, String model, Reply reply) {
    HttpResponse response;
    if (reply.result() instanceof ProxyService.Result.Answered answered) {
      metrics.request(model, answered.response().status().intValue());
      response = answered.response();
    } else {
      response = error(endpoint, model, ((ProxyService.Result.Failed) reply.result()).error());
    }
    return reply.verdict() == null ? response : response.addHeaders(reply.verdict().headers());
  }

  /** The client-facing path of an endpoint (span names). */
  private static String path(Endpoint endpoint) {
    return switch (endpoint) {
      case MESSAGES -> "/v1/messages";
      default -> endpoint.enginePath();
    };
  }

  /**
   * The body read's own timeout is the client's (400 {@code body_timeout}); other failures pass on.
   */
  private static <T> T bodyNotReceived(Throwable e) {
    Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    if (cause instanceof java.util.concurrent.TimeoutException) {
      throw new ApiException(
          ApiError.invalid("The request body was not received in time.", null, "body_timeout"));
    }
    throw e instanceof CompletionException c ? c : new CompletionException(e);
  }

  private ApiError toApiError(Throwable e) {
    Throwable cause = e;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    if (cause instanceof ApiException api) {
      return api.error();
    }
    if (cause instanceof EntityStreamSizeException || tooLarge(cause)) {
      return ApiError.tooLarge(settings.maxBodyBytes());
    }
    if (cause instanceof EntityStreamException stream) {
      return ApiError.invalid(
          "The request body could not be read: " + stream.info().summary(), null, "invalid_body");
    }
    if (cause instanceof java.util.concurrent.TimeoutException) {
      // The body's own timeout is a 400 (bodyNotReceived); any other is this node running late.
      return ApiError.unavailable("The ingress timed out handling the request: " + cause, 1);
    }
    return new ApiError(500, "Internal error: " + cause, "server_error", null, "internal_error", 0);
  }

  /**
   * True for Pekko HTTP's answer to a body whose declared length is over the limit: it fails the
   * read with an {@link EntityStreamException} "Request too large" (ToStrict, pekko-http 1.3.0)
   * before any byte is counted, where a body that only turns out too long while streaming fails
   * with an {@link EntityStreamSizeException}.
   */
  private static boolean tooLarge(Throwable cause) {
    return cause instanceof EntityStreamException stream
        && "Request too large".equals(stream.info().summary());
  }

  /** The error response in the endpoint's protocol, counted in the metrics. */
  HttpResponse error(Endpoint endpoint, String model, ApiError error) {
    metrics.request(model, error.status());
    if (error.status() == 429 || error.status() == 503) {
      metrics.rejected(
          error.status() == 503
              ? "no_replica"
              : error.type().equals("requests") || error.type().equals("tokens")
                  ? "rate_limited"
                  : "busy");
    } else if (error.status() < 500) {
      metrics.rejected("invalid");
    }
    return errorResponse(endpoint, error);
  }

  static HttpResponse errorResponse(Endpoint endpoint, ApiError error) {
    String body = (endpoint.anthropic() ? error.toAnthropic() : error.toOpenAi()).toString();
    HttpResponse response =
        HttpResponse.create()
            .withStatus(error.status())
            .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, body));
    if (error.retryAfterSeconds() > 0) {
      response = response.addHeader(RetryAfter.create((long) error.retryAfterSeconds()));
    }
    return response;
  }
}

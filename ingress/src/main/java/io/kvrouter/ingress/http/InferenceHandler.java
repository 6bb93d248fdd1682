package io.kvrouter.ingress.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.ingress.api.ApiError;
import io.kvrouter.ingress.api.ApiException;
import io.kvrouter.ingress.api.BodyReader;
import io.kvrouter.ingress.api.CountTokens;
import io.kvrouter.ingress.api.Endpoint;
import io.kvrouter.ingress.api.InferenceRequest;
import io.kvrouter.ingress.api.RequestValidator;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.proxy.ProxyService;
import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.tokenize.ChatTemplateException;
import io.kvrouter.ingress.tokenize.ModelTokenizer;
import io.kvrouter.ingress.tokenize.PromptEncoder;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.RetryAfter;
import org.apache.pekko.http.scaladsl.model.EntityStreamSizeException;
import org.apache.pekko.stream.Materializer;

/**
 * The request path of one inference call: read the body (size limit, strict UTF-8, JSON), validate,
 * tokenize with the model's template (on the {@link PromptEncoder}'s pool, re-using the tokens of a
 * conversation's earlier turns), check the context length, then route and forward through the
 * {@link ProxyService}. Every failure becomes the protocol's error object with its status; nothing
 * reaches a replica, and no reservation is made, before validation passed.
 */
public final class InferenceHandler {

  private final IngressSettings settings;
  private final BodyReader reader;
  private final RequestValidator validator;
  private final TokenizerRegistry tokenizers;
  private final Router router;
  private final ProxyService proxy;
  private final IngressMetrics metrics;
  private final Materializer materializer;
  private final PromptEncoder encoder;

  public InferenceHandler(
      IngressSettings settings,
      ObjectMapper mapper,
      TokenizerRegistry tokenizers,
      Router router,
      ProxyService proxy,
      IngressMetrics metrics,
      Materializer materializer,
      PromptEncoder encoder) {
    this.settings = settings;
    this.reader = new BodyReader(mapper);
    this.validator = new RequestValidator(mapper);
    this.tokenizers = tokenizers;
    this.router = router;
    this.proxy = proxy;
    this.metrics = metrics;
    this.materializer = materializer;
    this.encoder = encoder;
  }

  /** Handles one request to {@code endpoint} whose body is {@code entity}. */
  public CompletionStage<HttpResponse> handle(Endpoint endpoint, HttpEntity entity) {
    String[] model = {null};
    return entity
        .withSizeLimit(settings.maxBodyBytes())
        .toStrict(settings.bodyReadTimeout().toMillis(), materializer)
        .thenCompose(
            strict -> {
              InferenceRequest request =
                  validator.validate(endpoint, reader.read(strict.getData().toArray()));
              model[0] = request.model();
              return encoder
                  .onPool(() -> tokenize(request))
                  .thenCompose(
                      tokens -> {
                        if (endpoint == Endpoint.COUNT_TOKENS) {
                          return CompletableFuture.<ProxyService.Result>completedFuture(
                              new ProxyService.Result.Answered(
                                  HttpResponse.create()
                                      .withEntity(
                                          HttpEntities.create(
                                              ContentTypes.APPLICATION_JSON,
                                              CountTokens.body(tokens.length).toString()))));
                        }
                        return proxy.forward(request, tokens, "req-" + UUID.randomUUID());
                      });
            })
        .thenApply(
            result -> {
              if (result instanceof ProxyService.Result.Answered answered) {
                metrics.request(model[0], answered.response().status().intValue());
                return answered.response();
              }
              return error(endpoint, model[0], ((ProxyService.Result.Failed) result).error());
            })
        .exceptionally(e -> error(endpoint, model[0], toApiError(e)));
  }

  private int[] tokenize(InferenceRequest request) {
    ModelTokenizer tokenizer = tokenizerFor(request.model());
    int[] tokens;
    try {
      if (request.isChat()) {
        tokens =
            encoder.encodeChat(
                tokenizer, request.messages(), request.tools(), true, request.templateKwargs());
      } else if (request.promptTokenIds() != null) {
        tokens = request.promptTokenIds();
      } else {
        tokens = tokenizer.encodePrompt(request.promptText());
      }
    } catch (ChatTemplateException e) {
      throw new ApiException(
          ApiError.invalid(
              "The chat template rejected the messages: " + e.getMessage(),
              "messages",
              "invalid_messages"));
    }
    if (tokens.length == 0) {
      throw new ApiException(
          ApiError.invalid("The prompt is empty after tokenization.", "prompt", "empty_prompt"));
    }
    int limit = tokenizer.maxModelLen();
    int requested = tokens.length + Math.max(request.maxTokens(), 1);
    if (requested > limit) {
      throw new ApiException(
          ApiError.invalid(
              "This model's maximum context length is "
                  + limit
                  + " tokens. However, you requested "
                  + requested
                  + " tokens ("
                  + tokens.length
                  + " in the prompt, "
                  + Math.max(request.maxTokens(), 1)
                  + " in the completion).",
              request.maxTokens() > limit
                  ? "max_tokens"
                  : (request.isChat() ? "messages" : "prompt"),
              "context_length_exceeded"));
    }
    return tokens;
  }

  private ModelTokenizer tokenizerFor(String model) {
    var configured = tokenizers.find(model);
    if (configured.isPresent()) {
      return configured.get();
    }
    if (router.servedModels().contains(model)) {
      return tokenizers.get(settings.defaultModel());
    }
    throw new ApiException(ApiError.modelNotFound(model));
  }

  private ApiError toApiError(Throwable e) {
    Throwable cause = e;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    if (cause instanceof ApiException api) {
      return api.error();
    }
    if (cause instanceof EntityStreamSizeException) {
      return ApiError.tooLarge(settings.maxBodyBytes());
    }
    if (cause instanceof java.util.concurrent.TimeoutException) {
      return ApiError.invalid("The request body was not received in time.", null, "body_timeout");
    }
    return new ApiError(500, "Internal error: " + cause, "server_error", null, "internal_error", 0);
  }

  /** The error response in the endpoint's protocol, counted in the metrics. */
  HttpResponse error(Endpoint endpoint, String model, ApiError error) {
    metrics.request(model, error.status());
    if (error.status() == 429 || error.status() == 503) {
      metrics.rejected(error.status() == 429 ? "busy" : "no_replica");
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

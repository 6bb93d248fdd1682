package io.kvrouter.ingress.extproc;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.ingress.api.ApiError;
import io.kvrouter.ingress.api.ApiException;
import io.kvrouter.ingress.api.BodyReader;
import io.kvrouter.ingress.api.Endpoint;
import io.kvrouter.ingress.api.InferenceRequest;
import io.kvrouter.ingress.api.RequestValidator;
import io.kvrouter.ingress.api.TokenizedPrompt;
import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.tokenize.ModelTokenizer;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;

/**
 * Turns a request body that Envoy hands over into what the router needs: the same validation, chat
 * template and tokenizer as the HTTP ingress, so both pick the same replica for the same request.
 * Bad input throws {@link ApiException} with the OpenAI error to answer.
 */
final class PromptDecoder {

  /** A validated request and its prompt's token ids (not mutated after construction). */
  record Decoded(InferenceRequest request, int[] tokens) {}

  private final BodyReader reader;
  private final RequestValidator validator;
  private final TokenizerRegistry tokenizers;
  private final Router router;
  private final String defaultModel;

  PromptDecoder(
      ObjectMapper mapper, TokenizerRegistry tokenizers, Router router, String defaultModel) {
    this.reader = new BodyReader(mapper);
    this.validator = new RequestValidator();
    this.tokenizers = tokenizers;
    this.router = router;
    this.defaultModel = defaultModel;
  }

  /** The OpenAI endpoint of an HTTP path, or null when the picker does not route it. */
  static Endpoint endpoint(String path) {
    String p = path == null ? "" : path;
    int q = p.indexOf('?');
    if (q >= 0) {
      p = p.substring(0, q);
    }
    return switch (p) {
      case "/v1/completions" -> Endpoint.COMPLETIONS;
      case "/v1/chat/completions" -> Endpoint.CHAT;
      default -> null;
    };
  }

  Decoded decode(Endpoint endpoint, byte[] body) {
    InferenceRequest request = validator.validate(endpoint, reader.read(body));
    ModelTokenizer tokenizer =
        TokenizedPrompt.tokenizerFor(
            tokenizers, router::servedModels, defaultModel, router.baseModel(request.model()));
    int[] tokens =
        TokenizedPrompt.of(
            request,
            tokenizer,
            (t, r) -> t.encodeChat(r.messages(), r.tools(), true, r.templateKwargs()));
    int requested = tokens.length + Math.max(request.maxTokens(), 1);
    if (requested > tokenizer.maxModelLen()) {
      throw new ApiException(
          ApiError.invalid(
              "This model's maximum context length is "
                  + tokenizer.maxModelLen()
                  + " tokens. However, you requested "
                  + requested
                  + " tokens.",
              request.isChat() ? "messages" : "prompt",
              "context_length_exceeded"));
    }
    return new Decoded(request, tokens);
  }
}

package io.kvrouter.ingress.extproc;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import io.kvrouter.ingress.api.ApiException;
import io.kvrouter.ingress.api.BodyReader;
import io.kvrouter.ingress.api.Endpoint;
import io.kvrouter.ingress.api.InferenceRequest;
import io.kvrouter.ingress.api.RequestTokenizer;
import io.kvrouter.ingress.api.RequestValidator;
import java.util.concurrent.CompletionStage;

/**
 * Turns a request body that Envoy hands over into what the router needs: the same validation and
 * the same {@link RequestTokenizer} (template, tokenizer, chat prefix cache, context-length check)
 * as the HTTP ingress, so both pick the same replica for the same request. Bad input throws {@link
 * ApiException} with the OpenAI error to answer.
 *
 * <p>{@link #decodeOnPool} runs on the tokenizer's pool ({@code
 * kvrouter.ingress.tokenize.dispatcher}) whatever the body's size: the picker's gRPC messages
 * arrive on the Netty event loop that serves every stream of Envoy's connection, so even a short
 * prompt is not tokenized there.
 */
final class PromptDecoder {

  /** A validated request and its prompt's token ids (not mutated after construction). */
  record Decoded(InferenceRequest request, int[] tokens) {}

  private final BodyReader reader;
  private final RequestValidator validator;
  private final RequestTokenizer tokenizer;

  PromptDecoder(ObjectMapper mapper, RequestTokenizer tokenizer) {
    this.reader = new BodyReader(mapper);
    this.validator = new RequestValidator();
    this.tokenizer = tokenizer;
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

  /**
   * {@link #decode} of the body (copied once, on the pool) on the tokenizer's pool; fails with a
   * {@link java.util.concurrent.CompletionException} around the {@link ApiException} of bad input.
   */
  CompletionStage<Decoded> decodeOnPool(Endpoint endpoint, ByteString body) {
    return tokenizer.encoder().onPool(() -> decode(endpoint, body.toByteArray()));
  }

  Decoded decode(Endpoint endpoint, byte[] body) {
    InferenceRequest request = validator.validate(endpoint, reader.read(body));
    return new Decoded(request, tokenizer.tokenize(request));
  }
}

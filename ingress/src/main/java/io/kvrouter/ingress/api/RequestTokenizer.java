package io.kvrouter.ingress.api;

import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.tokenize.ChatTemplateException;
import io.kvrouter.ingress.tokenize.ModelTokenizer;
import io.kvrouter.ingress.tokenize.PromptEncoder;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * A validated request's prompt as token ids, the one path of the HTTP ingress and the Envoy picker
 * alike (so both pick the same replica for the same request and both re-use cached chat prefixes):
 * the model's tokenizer ({@link TokenizedPrompt#tokenizerFor}), chat messages through the {@link
 * PromptEncoder} and its prefix cache, completions prompts as {@link TokenizedPrompt#of} encodes
 * them, then the context-length check.
 *
 * <p>Thread-safe; {@link #tokenize(InferenceRequest)} runs on the caller's thread (the Envoy picker
 * calls it), {@link #tokenize(InferenceRequest, long)} where the {@link PromptEncoder} puts the
 * work (the HTTP ingress).
 */
public final class RequestTokenizer {

  private final TokenizerRegistry tokenizers;
  private final Router router;
  private final String defaultModel;
  private final PromptEncoder encoder;

  /**
   * @param tokenizers the configured models
   * @param router the models the replicas serve, and the base model of an adapter
   * @param defaultModel whose tokenizer serves a served model without one of its own
   * @param encoder chat prompts through the prefix cache
   */
  public RequestTokenizer(
      TokenizerRegistry tokenizers, Router router, String defaultModel, PromptEncoder encoder) {
    this.tokenizers = tokenizers;
    this.router = router;
    this.defaultModel = defaultModel;
    this.encoder = encoder;
  }

  /**
   * The prompt's token ids.
   *
   * @throws ApiException with the OpenAI error to answer: {@code model_not_found}, the errors of
   *     {@link TokenizedPrompt#of}, or {@code context_length_exceeded}
   */
  public int[] tokenize(InferenceRequest request) {
    ModelTokenizer tokenizer = tokenizerOf(request.model());
    return withinContext(
        request,
        tokenizer,
        TokenizedPrompt.of(
            request,
            tokenizer,
            (t, r) -> encoder.encodeChat(t, r.messages(), r.tools(), true, r.templateKwargs())));
  }

  /**
   * The prompt's token ids, as {@link #tokenize(InferenceRequest)}, in a stage (failed with the
   * {@link ApiException} to answer): a body of at most {@code inline-max-bytes} on the caller's
   * thread; a longer chat rendered and looked up in the prefix cache there, and tokenized there too
   * when the cache holds all but a short tail ({@link PromptEncoder#encodeChatStaged}); anything
   * else on the pool.
   */
  public CompletionStage<int[]> tokenize(InferenceRequest request, long bodyBytes) {
    if (!request.isChat() || bodyBytes <= encoder.inlineMaxBytes()) {
      return encoder.forBody(bodyBytes, () -> tokenize(request));
    }
    try {
      ModelTokenizer tokenizer = tokenizerOf(request.model());
      TokenizedPrompt.images(request);
      CompletionStage<int[]> ids;
      try {
        ids =
            encoder.encodeChatStaged(
                tokenizer, request.messages(), request.tools(), true, request.templateKwargs());
      } catch (ChatTemplateException e) {
        throw TokenizedPrompt.rejected(e);
      }
      return ids.thenApply(
          tokens -> withinContext(request, tokenizer, TokenizedPrompt.nonEmpty(tokens)));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(new CompletionException(e));
    }
  }

  /**
   * {@code tokens}, when they and the completion fit the model's context.
   *
   * @throws ApiException {@code context_length_exceeded} otherwise
   */
  private static int[] withinContext(
      InferenceRequest request, ModelTokenizer tokenizer, int[] tokens) {
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

  /**
   * The tokenizer of {@code model} (an adapter's is its base model's).
   *
   * @throws ApiException {@code model_not_found} when no replica serves it
   */
  public ModelTokenizer tokenizerOf(String model) {
    return TokenizedPrompt.tokenizerFor(
        tokenizers, router::servedModels, defaultModel, router.baseModel(model));
  }

  /** The encoder: its pool and its cache. */
  public PromptEncoder encoder() {
    return encoder;
  }
}

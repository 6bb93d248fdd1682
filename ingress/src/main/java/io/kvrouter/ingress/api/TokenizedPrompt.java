package io.kvrouter.ingress.api;

import io.kvrouter.ingress.tokenize.ChatTemplateException;
import io.kvrouter.ingress.tokenize.ModelTokenizer;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.protocol.keys.MediaPrompt;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * A validated request's prompt as token ids, the same for the HTTP ingress and the Envoy picker (so
 * both pick the same replica for the same request), with the OpenAI error to answer where
 * tokenizing fails.
 */
public final class TokenizedPrompt {

  /** How a chat request's messages become token ids with its model's tokenizer. */
  @FunctionalInterface
  public interface ChatEncoding {
    /**
     * @throws ChatTemplateException if the template rejects the conversation
     */
    int[] encode(ModelTokenizer tokenizer, InferenceRequest request);
  }

  private TokenizedPrompt() {}

  /**
   * The images of a chat request in prompt order ({@link MediaPrompt#images}); empty for other
   * requests.
   *
   * @throws ApiException 400 {@code invalid_image} for an image part without a URL or with a
   *     malformed data URL (what a vLLM engine would refuse too)
   */
  public static List<MediaPrompt.Image> images(InferenceRequest request) {
    if (!request.isChat() || request.messages() == null) {
      return List.of();
    }
    try {
      return MediaPrompt.images(request.messages());
    } catch (MediaPrompt.BadImageException e) {
      throw new ApiException(ApiError.invalid(e.getMessage(), "messages", "invalid_image"));
    }
  }

  /**
   * The tokenizer of {@code model}: its own, or the default model's when a replica serves {@code
   * model} without a tokenizer of its own.
   *
   * @param servedModels the models the replicas serve (asked only when {@code model} has no
   *     tokenizer of its own)
   * @throws ApiException with {@code model_not_found} otherwise
   */
  public static ModelTokenizer tokenizerFor(
      TokenizerRegistry tokenizers,
      Supplier<Set<String>> servedModels,
      String defaultModel,
      String model) {
    var configured = tokenizers.find(model);
    if (configured.isPresent()) {
      return configured.get();
    }
    if (servedModels.get().contains(model)) {
      return tokenizers.get(defaultModel);
    }
    throw new ApiException(ApiError.modelNotFound(model));
  }

  /**
   * The prompt's token ids: the chat messages through {@code chat}, the client's token ids as they
   * are, or the text encoded by {@code tokenizer}.
   *
   * @throws ApiException with {@code invalid_messages} when the chat template rejects the messages,
   *     {@code invalid_image} for an image part without a usable URL ({@link #images}), {@code
   *     empty_prompt} when no token is left
   */
  public static int[] of(InferenceRequest request, ModelTokenizer tokenizer, ChatEncoding chat) {
    int[] tokens;
    try {
      if (request.isChat()) {
        images(request);
        tokens = chat.encode(tokenizer, request);
      } else if (request.promptTokenIds() != null) {
        tokens = request.promptTokenIds();
      } else {
        tokens = tokenizer.encodePrompt(request.promptText());
      }
    } catch (ChatTemplateException e) {
      throw rejected(e);
    }
    return nonEmpty(tokens);
  }

  /** The error to answer when the chat template rejects the messages. */
  public static ApiException rejected(ChatTemplateException e) {
    return new ApiException(
        ApiError.invalid(
            "The chat template rejected the messages: " + e.getMessage(),
            "messages",
            "invalid_messages"));
  }

  /**
   * {@code tokens}, when there is one.
   *
   * @throws ApiException {@code empty_prompt} otherwise
   */
  public static int[] nonEmpty(int[] tokens) {
    if (tokens.length == 0) {
      throw new ApiException(
          ApiError.invalid("The prompt is empty after tokenization.", "prompt", "empty_prompt"));
    }
    return tokens;
  }
}

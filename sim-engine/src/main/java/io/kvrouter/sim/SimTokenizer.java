package io.kvrouter.sim;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvrouter.protocol.keys.MediaPrompt;

/**
 * How the simulated engine turns requests into token ids, as a real vLLM does with the model's
 * tokenizer and chat template. The default, {@link #BYTES}, is {@link ByteTokenizer}; the demo
 * plugs in the router's own tokenizer for its model, so that chat requests (which the engine
 * tokenizes itself) produce the token ids the router hashed. Implementations are thread-safe.
 */
public interface SimTokenizer {

  /** A completions prompt given as text. */
  int[] encodePrompt(String text);

  /** A chat request body ({@code messages}, maybe {@code tools}, {@code chat_template_kwargs}). */
  int[] encodeChat(JsonNode body, boolean addGenerationPrompt);

  /**
   * A chat request with images: rendered as {@link #encodeChat(JsonNode, boolean)} renders it, each
   * image part standing as a {@link MediaPrompt#MARKER} in the text, then each marker expanded into
   * the image's placeholder tokens ({@link MediaPrompt#expand}), as vLLM's processor expands the
   * model's image placeholder. A tokenizer that cannot do this refuses images (the default: a 400
   * for the client).
   */
  default int[] encodeChat(
      JsonNode body, boolean addGenerationPrompt, MediaPrompt.Settings images) {
    throw new MediaPrompt.BadImageException("this engine's tokenizer takes no images");
  }

  /** Generated token ids back to text. */
  String decode(int[] ids);

  /** One token per UTF-8 byte and a trivial chat template; needs no files. */
  SimTokenizer BYTES =
      new SimTokenizer() {
        @Override
        public int[] encodePrompt(String text) {
          return ByteTokenizer.encode(text);
        }

        @Override
        public int[] encodeChat(JsonNode body, boolean addGenerationPrompt) {
          return ByteTokenizer.encode(
              ByteTokenizer.applyChatTemplate(
                  GenerationRequest.messages(body), addGenerationPrompt));
        }

        @Override
        public int[] encodeChat(
            JsonNode body, boolean addGenerationPrompt, MediaPrompt.Settings images) {
          return MediaPrompt.expand(
              ByteTokenizer.applyChatTemplate(
                  GenerationRequest.messages(body), addGenerationPrompt),
              images,
              ByteTokenizer::encode);
        }

        @Override
        public String decode(int[] ids) {
          return ByteTokenizer.decode(ids);
        }
      };
}

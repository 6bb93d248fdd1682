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

  /** The vocabulary the engine's answers are made of ({@link AnswerTokens}). */
  default AnswerTokens answerTokens() {
    return AnswerTokens.LETTERS;
  }

  /**
   * A chat request with {@code continue_final_message}: rendered without a generation prompt and
   * cut after its final message's content ({@link #continueFinal}), then encoded. A tokenizer that
   * cannot do this refuses (the default: a 400).
   */
  default int[] encodeChatContinued(JsonNode body) {
    throw SimApiError.badRequest(
        "this engine's tokenizer cannot continue a final message", "continue_final_message");
  }

  /**
   * A chat rendered without a generation prompt, cut where its final message's content ends, as
   * transformers does for {@code continue_final_message} ({@code
   * src/transformers/utils/chat_template_utils.py}, {@code render_jinja_template}: the content is
   * stripped of surrounding whitespace and the rendering cut after its last occurrence), so the
   * model goes on inside that message. Whitespace that ends the content is therefore not in the
   * prompt, as with a real vLLM.
   *
   * @throws SimApiError 400 when the rendering does not hold the content
   */
  static String continueFinal(String rendered, JsonNode body) {
    java.util.List<String[]> messages = GenerationRequest.messages(body);
    String last = messages.get(messages.size() - 1)[1].strip();
    int at = rendered.lastIndexOf(last);
    if (at < 0) {
      throw SimApiError.badRequest(
          "the final message's content is not in the rendered chat", "continue_final_message");
    }
    return rendered.substring(0, at + last.length());
  }

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
        public int[] encodeChatContinued(JsonNode body) {
          return ByteTokenizer.encode(
              continueFinal(
                  ByteTokenizer.applyChatTemplate(GenerationRequest.messages(body), false), body));
        }

        @Override
        public String decode(int[] ids) {
          return ByteTokenizer.decode(ids);
        }
      };
}

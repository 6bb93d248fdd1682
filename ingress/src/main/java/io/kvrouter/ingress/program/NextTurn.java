package io.kvrouter.ingress.program;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.ingress.api.Endpoint;
import io.kvrouter.ingress.api.InferenceRequest;
import io.kvrouter.ingress.api.RequestTokenizer;
import io.kvrouter.ingress.api.RequestValidator;
import io.kvrouter.ingress.tokenize.ModelTokenizer;
import io.kvrouter.protocol.keys.MediaPrompt;

/**
 * The prefix of a program's next prompt: the turn's request as the client sent it, with the reply
 * appended as the client appends it (an OpenAI assistant message with its {@code tool_calls}, an
 * Anthropic assistant message with its {@code tool_use} blocks, the Responses output items),
 * validated and translated as the next request will be, and rendered with the model's chat template
 * without a generation prompt. That is the reply as the template renders it in history, which is
 * not the tokens the engine generated: tool calls are re-serialised by the template, thinking is
 * dropped or kept as the template decides. The next turn (the tool results and a generation prompt)
 * only adds to it.
 */
final class NextTurn {

  /** The prefix as text (what the template rendered) and as the model's token ids. */
  record Prefix(String text, int[] tokens) {}

  private NextTurn() {}

  /** The body the client's next turn starts with. */
  static ObjectNode body(Endpoint endpoint, ObjectNode sent, Reply reply) {
    ObjectNode next = sent.deepCopy();
    switch (endpoint) {
      case CHAT, MESSAGES -> next.withArray("messages").addAll(reply.appended());
      case RESPONSES -> {
        JsonNode input = next.get("input");
        ArrayNode items = next.putArray("input");
        if (input != null && input.isTextual()) {
          items
              .addObject()
              .put("type", "message")
              .put("role", "user")
              .put("content", input.asText());
        } else if (input != null && input.isArray()) {
          items.addAll((ArrayNode) input);
        }
        items.addAll(reply.appended());
      }
      default -> throw new IllegalArgumentException("no next turn for " + endpoint);
    }
    return next;
  }

  /**
   * The next turn's prefix, or null when it cannot be rendered here (images, whose placeholders the
   * prefix cache does not take).
   *
   * @throws RuntimeException what validation or the template says of a body they reject
   */
  static Prefix render(
      RequestTokenizer tokenizer,
      RequestValidator validator,
      Endpoint endpoint,
      ObjectNode sent,
      Reply reply) {
    InferenceRequest next = validator.validate(endpoint, body(endpoint, sent, reply));
    ModelTokenizer model = tokenizer.tokenizerOf(next.model());
    String text = model.renderChat(next.messages(), next.tools(), false, next.templateKwargs());
    if (text.contains(MediaPrompt.MARKER)) {
      return null;
    }
    return new Prefix(text, tokenizer.encoder().cache().encode(model, text));
  }
}

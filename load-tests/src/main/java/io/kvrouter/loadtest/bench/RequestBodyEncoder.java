package io.kvrouter.loadtest.bench;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The JSON body of one streaming request, OpenAI style: {@code model}, {@code prompt} (text or
 * token ids) or {@code messages}, {@code max_tokens}, {@code stream: true} and {@code
 * stream_options.include_usage: true} so the server ends with a usage chunk (vLLM then reports
 * {@code usage.prompt_tokens_details.cached_tokens} when prefix caching stats are on).
 *
 * <p>Written with Jackson's streaming generator, no tree: a 100k-token prompt costs one pass over
 * its ids. Thread-safe (the factory is). Cost: O(prompt size) time and bytes.
 */
final class RequestBodyEncoder {

  private static final JsonFactory JSON = new JsonFactory();

  private RequestBodyEncoder() {}

  /**
   * Encodes {@code request} for {@code endpoint}.
   *
   * @throws IllegalArgumentException if the prompt form does not fit the endpoint (token ids to
   *     chat, messages to completions)
   */
  static byte[] encode(
      BenchRequest request, String model, BenchEndpoint endpoint, boolean ignoreEos) {
    BenchPrompt prompt = request.prompt();
    if (endpoint == BenchEndpoint.COMPLETIONS && prompt instanceof BenchPrompt.Chat) {
      throw new IllegalArgumentException(
          "chat messages cannot be sent to /v1/completions; use --endpoint chat");
    }
    if (endpoint == BenchEndpoint.CHAT && prompt instanceof BenchPrompt.TokenIds) {
      throw new IllegalArgumentException(
          "token-id prompts cannot be sent to /v1/chat/completions; "
              + "use --endpoint completions");
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(256 + prompt.size() * 7);
    try (JsonGenerator g = JSON.createGenerator(bytes)) {
      g.writeStartObject();
      g.writeStringField("model", model);
      if (endpoint == BenchEndpoint.COMPLETIONS) {
        if (prompt instanceof BenchPrompt.Text t) {
          g.writeStringField("prompt", t.text());
        } else {
          int[] ids = ((BenchPrompt.TokenIds) prompt).ids();
          g.writeFieldName("prompt");
          g.writeArray(ids, 0, ids.length);
        }
      } else {
        g.writeArrayFieldStart("messages");
        if (prompt instanceof BenchPrompt.Text t) {
          message(g, "user", t.text());
        } else {
          for (BenchPrompt.ChatMessage m : ((BenchPrompt.Chat) prompt).messages()) {
            message(g, m.role(), m.content());
          }
        }
        g.writeEndArray();
      }
      g.writeNumberField("max_tokens", request.maxTokens());
      g.writeBooleanField("stream", true);
      g.writeObjectFieldStart("stream_options");
      g.writeBooleanField("include_usage", true);
      g.writeEndObject();
      if (ignoreEos) {
        g.writeBooleanField("ignore_eos", true);
      }
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot encode a request body", e);
    }
    return bytes.toByteArray();
  }

  private static void message(JsonGenerator g, String role, String content) throws IOException {
    g.writeStartObject();
    g.writeStringField("role", role);
    g.writeStringField("content", content);
    g.writeEndObject();
  }
}

package io.kvrouter.ingress.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.apache.pekko.NotUsed;
import org.apache.pekko.japi.pf.PFBuilder;
import org.apache.pekko.stream.javadsl.Framing;
import org.apache.pekko.stream.javadsl.FramingTruncation;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * Turns an engine's OpenAI chat stream into Anthropic's event stream: the bytes are cut into SSE
 * events, each event's JSON goes through one {@link AnthropicTranslator}, and the end of the
 * engine's stream ({@code [DONE]}, or the body simply ending) closes the message. An engine error
 * frame, or a stream that breaks, ends the client's stream with an Anthropic {@code error} event.
 */
public final class AnthropicStreams {

  /** Marks the end of the engine's stream inside the translation (a frame no engine sends). */
  private static final ByteString END_OF_STREAM = ByteString.fromString("\u0000end\u0000");

  /** The longest SSE event accepted from an engine. */
  private static final int MAX_EVENT_BYTES = 4 << 20;

  private AnthropicStreams() {}

  /** The Anthropic stream of {@code engine}'s chat stream. */
  public static Source<ByteString, NotUsed> translate(
      Source<ByteString, NotUsed> engine, AnthropicTranslator translator, ObjectMapper mapper) {
    // The end marker is a plain element, not a lazily computed source: concat pulls its second
    // source eagerly, which would run the closing events before the first chunk.
    return engine
        .via(
            Framing.delimiter(
                ByteString.fromString("\n\n"), MAX_EVENT_BYTES, FramingTruncation.ALLOW))
        .concat(Source.single(END_OF_STREAM))
        .mapConcat(
            frame -> {
              if (frame.equals(END_OF_STREAM)) {
                return translator.onEnd();
              }
              String data = Sse.data(frame.utf8String());
              if (data == null) {
                return List.<String>of();
              }
              if (Sse.DONE.equals(data.trim())) {
                return translator.onEnd();
              }
              JsonNode chunk = Sse.parse(mapper, data);
              if (chunk == null) {
                return List.<String>of();
              }
              if (chunk.has("error")) {
                return List.of(
                    translator.onError(chunk.path("error").path("message").asText("engine error")));
              }
              return translator.onChunk(chunk);
            })
        .recoverWithRetries(
            1,
            new PFBuilder<Throwable, Source<String, NotUsed>>()
                .matchAny(
                    e ->
                        Source.single(
                            translator.onError("stream from replica failed: " + e.getMessage())))
                .build())
        .map(ByteString::fromString);
  }
}

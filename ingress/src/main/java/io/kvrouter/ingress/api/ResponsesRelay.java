package io.kvrouter.ingress.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.protocol.ReplicaInfo;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCode;
import org.apache.pekko.japi.pf.PFBuilder;
import org.apache.pekko.stream.javadsl.Framing;
import org.apache.pekko.stream.javadsl.FramingTruncation;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * A Responses API request relayed to an engine that serves {@code /v1/responses}, with the response
 * ids rewritten on the way back so they name the replica that holds the response ({@link
 * ResponseIds}): the {@code id} and {@code previous_response_id} of a whole response, and of the
 * response object inside the stream's lifecycle events ({@code response.created}, {@code
 * response.in_progress}, {@code response.completed}, {@code response.incomplete}, {@code
 * response.failed}, {@code response.queued}); every other event passes byte for byte. A broken
 * stream ends with Responses' {@code error} event.
 */
final class ResponsesRelay extends EngineExchange {

  private static final Set<String> CARRY_RESPONSE =
      Set.of(
          "response.created",
          "response.in_progress",
          "response.completed",
          "response.incomplete",
          "response.failed",
          "response.queued");

  private static final int MAX_EVENT_BYTES = 4 << 20;

  private final InferenceRequest request;
  private final String replicaId;
  private final ObjectMapper mapper;

  ResponsesRelay(InferenceRequest request, String replicaId, ObjectMapper mapper) {
    this.request = request;
    this.replicaId = replicaId;
    this.mapper = mapper;
  }

  @Override
  public String path() {
    return ReplicaInfo.RESPONSES_API;
  }

  @Override
  public byte[] body() {
    return bytes(request.engineBody());
  }

  @Override
  public HttpResponse whole(StatusCode status, byte[] answer) {
    JsonNode body = Sse.parse(mapper, new String(answer, StandardCharsets.UTF_8));
    if (status.isSuccess() && body instanceof ObjectNode response) {
      rewrite(response);
      return json(status, bytes(response));
    }
    return json(status, answer);
  }

  /** Gives the client ids that name this replica. */
  private void rewrite(ObjectNode response) {
    JsonNode id = response.get("id");
    if (id != null && id.isTextual()) {
      // The program the response belongs to: its request's, else it starts one of its own.
      String program = request.sessionKey() != null ? request.sessionKey() : id.asText();
      response.put("id", ResponseIds.encode(id.asText(), replicaId, program));
    }
    JsonNode previous = response.get("previous_response_id");
    JsonNode asked = request.nativeBody().get("previous_response_id");
    if (previous != null && previous.isTextual() && asked != null && asked.isTextual()) {
      response.put("previous_response_id", asked.asText());
    }
  }

  @Override
  public Source<ByteString, NotUsed> stream(Source<ByteString, NotUsed> engine) {
    int[] lastSequence = {-1};
    return engine
        .via(
            Framing.delimiter(
                ByteString.fromString("\n\n"), MAX_EVENT_BYTES, FramingTruncation.ALLOW))
        .map(frame -> event(frame, lastSequence))
        .recoverWithRetries(
            1,
            new PFBuilder<Throwable, Source<ByteString, NotUsed>>()
                .matchAny(e -> Source.single(ByteString.fromString(error(e, lastSequence[0] + 1))))
                .build());
  }

  private ByteString event(ByteString frame, int[] lastSequence) {
    String text = frame.utf8String();
    String name = eventName(text);
    String data = Sse.data(text);
    if (name == null || data == null || !CARRY_RESPONSE.contains(name)) {
      lastSequence[0] = Math.max(lastSequence[0], sequence(text));
      return frame.concat(ByteString.fromString("\n\n"));
    }
    JsonNode payload = Sse.parse(mapper, data);
    if (payload instanceof ObjectNode event && event.get("response") instanceof ObjectNode r) {
      rewrite(r);
      lastSequence[0] = Math.max(lastSequence[0], event.path("sequence_number").asInt(-1));
      return ByteString.fromString(Sse.event(name, event.toString()));
    }
    return frame.concat(ByteString.fromString("\n\n"));
  }

  private static String eventName(String frame) {
    for (String line : frame.split("\n")) {
      if (line.startsWith("event:")) {
        return line.substring(6).trim();
      }
    }
    return null;
  }

  /** The {@code sequence_number} of an event left as it is (a cheap scan), or -1. */
  private static int sequence(String frame) {
    int at = frame.lastIndexOf("\"sequence_number\":");
    if (at < 0) {
      return -1;
    }
    int i = at + "\"sequence_number\":".length();
    while (i < frame.length() && frame.charAt(i) == ' ') {
      i++;
    }
    int start = i;
    while (i < frame.length() && Character.isDigit(frame.charAt(i))) {
      i++;
    }
    return i > start ? Integer.parseInt(frame.substring(start, i)) : -1;
  }

  private static String error(Throwable e, int sequence) {
    ObjectNode err = JsonNodeFactory.instance.objectNode();
    err.put("type", "error");
    err.put("code", "upstream_error");
    err.put("message", "stream from replica failed: " + e.getMessage());
    err.putNull("param");
    err.put("sequence_number", sequence);
    return Sse.event("error", err.toString());
  }
}

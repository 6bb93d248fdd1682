package io.kvrouter.ingress.api;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.ingress.routing.Target;
import io.kvrouter.protocol.ReplicaInfo;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCode;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * How one request is put to the replica chosen for it, and how that replica's answer is given back
 * to the client, in the client's protocol:
 *
 * <ul>
 *   <li>OpenAI completions and chat: forwarded as they are (a completions text prompt as the
 *       router's token ids where the engine takes them), answered as they come.
 *   <li>Anthropic messages, to an engine that serves {@code /v1/messages} itself (vLLM does): sent
 *       unchanged, answered unchanged.
 *   <li>Anthropic messages, to any other engine: sent as the translated chat request, answered
 *       through {@link AnthropicTranslator} (errors in Anthropic's shape).
 *   <li>Responses: sent to the engine's {@code /v1/responses} (only engines serving it are chosen),
 *       with response ids rewritten so they name the replica ({@link ResponsesRelay}).
 * </ul>
 *
 * <p>One exchange per attempt; the proxy calls {@link #whole} or {@link #stream} once.
 */
public abstract class EngineExchange {

  private static final com.fasterxml.jackson.databind.ObjectMapper BODY_WRITER =
      new com.fasterxml.jackson.databind.ObjectMapper();

  /** Path on the engine, e.g. {@code /v1/chat/completions}. */
  public abstract String path();

  /** The request body for the engine. */
  public abstract byte[] body();

  /** The client's response to a whole engine answer with {@code status} and {@code body}. */
  public abstract HttpResponse whole(StatusCode status, byte[] body);

  /** The client's event stream from a successful engine stream (errors become error events). */
  public abstract Source<ByteString, NotUsed> stream(Source<ByteString, NotUsed> engine);

  /** The exchange for {@code request}, whose prompt tokenized to {@code tokenIds}, at {@code t}. */
  public static EngineExchange of(
      InferenceRequest request, int[] tokenIds, Target t, ObjectMapper mapper) {
    return switch (request.endpoint()) {
      case MESSAGES ->
          t.serves(ReplicaInfo.MESSAGES_API)
              ? new Relayed(
                  ReplicaInfo.MESSAGES_API,
                  request.bytesOf(request.nativeBody(), EngineExchange::bytes),
                  true,
                  mapper)
              : new AnthropicExchange(request, tokenIds.length, mapper);
      case RESPONSES -> new ResponsesRelay(request, t.replicaId(), mapper);
      case COMPLETIONS ->
          new Relayed(
              request.endpoint().enginePath(), completions(request, tokenIds, t), false, mapper);
      default ->
          new Relayed(
              request.endpoint().enginePath(),
              request.bytesOf(request.engineBody(), EngineExchange::bytes),
              false,
              mapper);
    };
  }

  private static byte[] completions(InferenceRequest request, int[] tokenIds, Target t) {
    if (promptAsIds(request, t)) {
      return withPrompt(request.engineBody(), tokenIds);
    }
    return request.bytesOf(request.engineBody(), EngineExchange::bytes);
  }

  /** Whether the engine gets the router's token ids in place of a completions text prompt. */
  private static boolean promptAsIds(InferenceRequest request, Target t) {
    return request.endpoint() == Endpoint.COMPLETIONS
        && request.promptText() != null
        && t.acceptsTokenIds();
  }

  /**
   * {@code body} serialised with {@code ids} as its {@code prompt}, in the prompt's place: the
   * bytes of {@link #openAiBody}'s copy, written field by field without the copy and without a node
   * per token id (a 1k-token prompt would be a thousand of them, built to be serialised once).
   */
  static byte[] withPrompt(ObjectNode body, int[] ids) {
    var out = new java.io.ByteArrayOutputStream(256 + 8 * ids.length);
    try (JsonGenerator g = BODY_WRITER.getFactory().createGenerator(out)) {
      g.writeStartObject();
      for (var it = body.fields(); it.hasNext(); ) {
        var field = it.next();
        g.writeFieldName(field.getKey());
        if (field.getKey().equals("prompt")) {
          g.writeArray(ids, 0, ids.length);
        } else {
          g.writeTree(field.getValue());
        }
      }
      g.writeEndObject();
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot serialise the engine request", e); // in memory
    }
    return out.toByteArray();
  }

  /**
   * The OpenAI completions or chat body for {@code t} (a completions text prompt as the router's
   * token ids where the engine takes them); not a copy when nothing changes, so callers that edit
   * it copy it first.
   */
  public static ObjectNode openAiBody(InferenceRequest request, int[] tokenIds, Target t) {
    ObjectNode body = request.engineBody();
    if (promptAsIds(request, t)) {
      body = body.deepCopy();
      ArrayNode ids = body.putArray("prompt");
      for (int id : tokenIds) {
        ids.add(id);
      }
    }
    return body;
  }

  /**
   * An OpenAI completions or chat request sent with {@code body} as it is (the decode hop of a
   * disaggregated request carries the prefill's {@code kv_transfer_params}), answered unchanged.
   */
  public static EngineExchange relayed(Endpoint endpoint, ObjectNode body, ObjectMapper mapper) {
    return new Relayed(endpoint.enginePath(), bytes(body), false, mapper);
  }

  /**
   * An OpenAI completions or chat request that continues an answer another engine left unfinished:
   * sent with {@code body} as it is, its stream handed on as it comes (whoever continues it judges
   * how it ends), a whole answer unchanged.
   */
  public static EngineExchange continued(Endpoint endpoint, ObjectNode body) {
    return new Relayed(endpoint.enginePath(), bytes(body), false, null) {
      @Override
      public Source<ByteString, NotUsed> stream(Source<ByteString, NotUsed> engine) {
        return engine;
      }
    };
  }

  static byte[] bytes(JsonNode body) {
    try {
      // Straight to bytes, no intermediate String: a 128k-token conversation is half a megabyte.
      return BODY_WRITER.writeValueAsBytes(body);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("cannot serialise the engine request", e);
    }
  }

  static HttpResponse json(StatusCode status, byte[] body) {
    return HttpResponse.create()
        .withStatus(status)
        .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, body));
  }

  /** The last data frame of a failed stream, in the protocol's own form. */
  static String streamError(boolean anthropic, String message) {
    ApiError error = ApiError.upstream("stream from replica failed: " + message);
    return anthropic
        ? Sse.event("error", error.toAnthropic().toString())
        : Sse.frame(error.toOpenAi().toString()) + Sse.frame(Sse.DONE);
  }

  /** Forwarded and answered unchanged; a broken stream ends with the protocol's error frame. */
  private static class Relayed extends EngineExchange {
    private final String path;
    private final byte[] body;
    private final boolean anthropic;

    Relayed(String path, byte[] body, boolean anthropic, ObjectMapper mapper) {
      this.path = path;
      this.body = body;
      this.anthropic = anthropic;
    }

    @Override
    public String path() {
      return path;
    }

    @Override
    public byte[] body() {
      return body;
    }

    @Override
    public HttpResponse whole(StatusCode status, byte[] answer) {
      return json(status, answer);
    }

    @Override
    public Source<ByteString, NotUsed> stream(Source<ByteString, NotUsed> engine) {
      return engine.recoverWithRetries(
          1,
          org.apache.pekko.japi.pf.PFBuilder.<Throwable, Source<ByteString, NotUsed>>create()
              .matchAny(
                  e -> Source.single(ByteString.fromString(streamError(anthropic, e.getMessage()))))
              .build());
    }
  }

  /** An Anthropic request spoken to a chat-only engine. */
  private static final class AnthropicExchange extends EngineExchange {
    private final InferenceRequest request;
    private final int promptTokens;
    private final ObjectMapper mapper;

    AnthropicExchange(InferenceRequest request, int promptTokens, ObjectMapper mapper) {
      this.request = request;
      this.promptTokens = promptTokens;
      this.mapper = mapper;
    }

    @Override
    public String path() {
      return Endpoint.MESSAGES.enginePath();
    }

    @Override
    public byte[] body() {
      return bytes(request.engineBody());
    }

    private AnthropicTranslator translator() {
      List<String> stops = new ArrayList<>();
      request.engineBody().path("stop").forEach(s -> stops.add(s.asText()));
      return new AnthropicTranslator(request.model(), promptTokens, stops);
    }

    @Override
    public HttpResponse whole(StatusCode status, byte[] answer) {
      JsonNode body = Sse.parse(mapper, new String(answer, StandardCharsets.UTF_8));
      if (status.isSuccess() && body != null) {
        return json(status, bytes(translator().message(body)));
      }
      return json(status, bytes(ApiError.fromEngine(status.intValue(), body).toAnthropic()));
    }

    @Override
    public Source<ByteString, NotUsed> stream(Source<ByteString, NotUsed> engine) {
      return AnthropicStreams.translate(engine, translator(), mapper);
    }
  }
}

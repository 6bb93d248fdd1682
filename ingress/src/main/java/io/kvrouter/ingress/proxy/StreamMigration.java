package io.kvrouter.ingress.proxy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.ingress.api.InferenceRequest;
import io.kvrouter.ingress.api.Sse;
import io.kvrouter.ingress.metrics.ProxyListener;
import io.kvrouter.ingress.routing.Target;
import io.kvrouter.ingress.tracing.RequestTrace;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.NotUsed;
import org.apache.pekko.japi.pf.PFBuilder;
import org.apache.pekko.stream.javadsl.Framing;
import org.apache.pekko.stream.javadsl.FramingTruncation;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * Keeps one streaming OpenAI chat or completions answer going when its engine dies: a stream that
 * breaks, ends before {@code [DONE]}, reports an error of the engine's own mid-answer, or stays
 * silent past the stall timeout after its first byte continues on another replica, which is sent
 * the prompt followed by the answer so far ({@link Continuation}), and whose events join the
 * client's stream as the first engine's ({@link ResumableStream}). At most {@link
 * ProxySettings#migrationLimit()} times per request. An answer that cannot move on (a tool call,
 * structured output: {@link Continuation#refusal}), or finds no replica to move to, fails as
 * before: the client gets the error event after the text it had (the engine's own, when it sent
 * one).
 *
 * <p>The tokens generated so far are the answer's text encoded again by the model's tokenizer (the
 * one that tokenizes prompts for routing): exact when the engine's tokenizer is the same and the
 * text encodes back to the tokens it was decoded from, which holds for most text but not for every
 * token sequence (a word the model spelled in unusual pieces comes back as its usual pieces). Both
 * the continued prompt and the reduced {@code max_tokens} rest on that count.
 *
 * <p>One instance per request; its stream's stages use it one event at a time.
 */
final class StreamMigration {

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(StreamMigration.class);

  /** The longest SSE event accepted from an engine. */
  private static final int MAX_EVENT_BYTES = 4 << 20;

  /** Marks the end of an engine's bytes among its events (no engine sends a NUL). */
  private static final ByteString END = ByteString.fromString("\u0000end\u0000");

  /** Places a continued request on another replica. */
  interface Resume {
    /**
     * Sends the body {@code body} makes for the replica chosen (among those not in {@code
     * excluded}, by the prompt {@code routedIds}); completes with that replica's stream once its
     * first byte is in, or fails when no replica takes it.
     */
    CompletionStage<Resumed> resume(
        Function<Target, ObjectNode> body, int[] routedIds, int maxTokens, Set<String> excluded);
  }

  /** The replica that took the request over and its raw event stream. */
  record Resumed(String replicaId, Source<ByteString, NotUsed> stream) {}

  /** The stream of an engine ended before its answer did. */
  static final class Cut extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Cut(String message) {
      super(message, null, false, false);
    }
  }

  private final InferenceRequest request;
  private final int[] promptIds;
  private final Function<String, int[]> encoder;
  private final ProxySettings settings;
  private final ProxyListener listener;
  private final RequestTrace trace;
  private final Resume resume;
  private final ResumableStream state;
  private final Set<String> excluded = new HashSet<>();
  private int migrations;

  /**
   * @param encoder the model's tokenizer for generated text (no special tokens)
   */
  StreamMigration(
      InferenceRequest request,
      int[] promptIds,
      Function<String, int[]> encoder,
      ProxySettings settings,
      ProxyListener listener,
      RequestTrace trace,
      ObjectMapper mapper,
      Resume resume) {
    this.request = request;
    this.promptIds = promptIds;
    this.encoder = encoder;
    this.settings = settings;
    this.listener = listener;
    this.trace = trace;
    this.resume = resume;
    this.state = new ResumableStream(mapper);
  }

  /** The client's stream of {@code engine}'s raw answer, served by {@code replicaId}. */
  Source<ByteString, NotUsed> wrap(Source<ByteString, NotUsed> engine, String replicaId) {
    return engine
        .idleTimeout(settings.stallTimeout())
        .via(
            Framing.delimiter(
                ByteString.fromString("\n\n"), MAX_EVENT_BYTES, FramingTruncation.ALLOW))
        // A last event without its blank line still counts ([DONE] as some servers end); one
        // cut in half is dropped by the state. The end marker is an element, not a lazily built
        // source, so that it is judged after every event went through the state.
        .concat(Source.single(END))
        .mapConcat(
            frame -> {
              if (frame.equals(END)) {
                if (!state.done() && !state.finished()) {
                  throw new Cut("replica " + replicaId + " ended the stream before its answer");
                }
                return state.done() ? List.<ByteString>of() : List.of(done());
              }
              String out = state.relay(frame.utf8String());
              if (state.engineError() != null) {
                throw new Cut("replica " + replicaId + " reported an error mid-answer");
              }
              return out.isEmpty() ? List.<ByteString>of() : List.of(ByteString.fromString(out));
            })
        .recoverWithRetries(
            1,
            new PFBuilder<Throwable, Source<ByteString, NotUsed>>()
                .matchAny(e -> cut(e, replicaId))
                .build());
  }

  private static ByteString done() {
    return ByteString.fromString(Sse.frame(Sse.DONE));
  }

  /** What follows when {@code replicaId}'s stream failed with {@code error}. */
  private Source<ByteString, NotUsed> cut(Throwable error, String replicaId) {
    if (state.done()) {
      return Source.empty();
    }
    if (state.finished()) {
      // The answer is whole; only its end (and a usage event) went missing.
      return Source.single(done());
    }
    Continuation.Refusal refusal = Continuation.refusal(request);
    if (refusal == null && state.toolCall()) {
      refusal = Continuation.Refusal.TOOL_CALL;
    }
    if (refusal == null && state.otherChoices()) {
      refusal = Continuation.Refusal.UNSUPPORTED;
    }
    if (refusal != null) {
      return refuse(refusal.outcome, error, replicaId);
    }
    if (migrations >= settings.migrationLimit()) {
      return refuse("limit", error, replicaId);
    }
    String text = state.text();
    int[] generated = encoder.apply(text);
    if (Continuation.body(request, promptIds, text, generated, true) == null) {
      return refuse("failed", error, replicaId);
    }
    migrations++;
    excluded.add(replicaId);
    RequestTrace.Phase span =
        trace
            .phase("migrate")
            .set("kvrouter.from", replicaId)
            .set("kvrouter.generated_tokens", generated.length)
            .set("kvrouter.migration", migrations)
            .set("kvrouter.cause", String.valueOf(error.getMessage()));
    int maxTokens = request.maxTokens() > 0 ? request.maxTokens() - generated.length : 0;
    CompletionStage<Source<ByteString, NotUsed>> next =
        resume
            .resume(
                t -> Continuation.body(request, promptIds, text, generated, t.acceptsTokenIds()),
                Continuation.routed(promptIds, generated),
                maxTokens,
                Set.copyOf(excluded))
            .handle(
                (resumed, failure) -> {
                  if (failure != null) {
                    span.fail(String.valueOf(failure));
                    count("failed", replicaId, error, String.valueOf(failure));
                    return ended(error);
                  }
                  span.set("kvrouter.to", resumed.replicaId()).end();
                  count("migrated", replicaId, error, "to " + resumed.replicaId());
                  state.resumed(generated.length);
                  return wrap(resumed.stream(), resumed.replicaId());
                });
    return Source.completionStageSource(next).mapMaterializedValue(m -> NotUsed.getInstance());
  }

  private Source<ByteString, NotUsed> refuse(String outcome, Throwable error, String replicaId) {
    count(outcome, replicaId, error, null);
    trace.phase("migrate").set("kvrouter.from", replicaId).fail(outcome);
    return ended(error);
  }

  /** The end of a stream that goes no further: the engine's own error event, or the failure. */
  private Source<ByteString, NotUsed> ended(Throwable error) {
    String engineError = state.engineError();
    if (engineError != null) {
      return Source.from(List.of(ByteString.fromString(engineError), done()));
    }
    return Source.failed(error);
  }

  private void count(String outcome, String replicaId, Throwable error, String detail) {
    if (outcome.equals("migrated")) {
      LOG.info(
          "stream of {} cut at replica {} ({}), continued {}",
          request.model(),
          replicaId,
          error.getMessage(),
          detail);
    } else {
      LOG.warn(
          "stream of {} cut at replica {} ({}) not continued: {}{}",
          request.model(),
          replicaId,
          error.getMessage(),
          outcome,
          detail == null ? "" : " (" + detail + ")");
    }
    try {
      listener.migration(request.model(), outcome);
    } catch (RuntimeException e) {
      LOG.warn("proxy listener failed", e);
    }
  }
}

package io.kvrouter.ingress.program;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.ingress.api.Endpoint;
import io.kvrouter.ingress.api.InferenceRequest;
import io.kvrouter.ingress.api.RequestTokenizer;
import io.kvrouter.ingress.api.RequestValidator;
import io.kvrouter.ingress.proxy.ProxyService;
import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.traffic.RequestTraffic;
import io.kvrouter.ingress.traffic.SessionRouter;
import io.kvrouter.ingress.traffic.SessionStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.stream.Materializer;

/**
 * The request path's view of programs (agent sessions): who a request's program is, where it ranks
 * in the router queue, and what its reply says of the next turn.
 *
 * <p>A request's program is its session key: the session header ({@code X-Session-ID}), Anthropic
 * {@code metadata.user_id}, OpenAI {@code prompt_cache_key} or {@code user}, a Responses {@code
 * previous_response_id}'s program ({@code api.ResponseIds}), and else the program header ({@link
 * ProgramHints}), which then also keys its session affinity. Its rank is its program's attained
 * service ({@link ProgramLedger}). Its answer is read as it passes to the client ({@link
 * ReplyReader}): the tokens the engine computed count to the program's service, and a reply that
 * ends in a tool call (or a turn the client said does) marks the program as coming back and, with
 * warming on, has the next turn's prefix ({@link NextTurn}) prefilled on the program's replica
 * ({@link TurnWarmer}). The program's next turn cancels a warm still in flight.
 */
public final class ProgramFront {

  /** The header naming the replica that answered ({@code proxy.RouteHeaders}). */
  private static final String REPLICA_HEADER = "x-kvrouter-replica";

  private final ProgramSettings settings;
  private final ProgramLedger ledger;
  private final ProgramMetrics metrics;
  private final TurnWarmer warmer;
  private final RequestTokenizer tokenizer;
  private final RequestValidator validator = new RequestValidator();
  private final SessionStore sessions;
  private final ObjectMapper mapper;

  /**
   * @param router the router warms reserve through (the proxy's, so a warm's release wakes the
   *     router queue)
   * @param sessions where the programs' replicas are bound, for an answer that does not name its
   *     replica
   */
  public ProgramFront(
      ProgramSettings settings,
      ActorSystem<?> system,
      Router router,
      RequestTokenizer tokenizer,
      SessionStore sessions,
      ObjectMapper mapper,
      MeterRegistry registry) {
    this.settings = settings;
    this.ledger =
        new ProgramLedger(
            settings.newProgramTokens(),
            settings.maxPrograms(),
            settings.idleTtl().toMillis(),
            System::currentTimeMillis,
            settings.oldestFirst());
    this.metrics = new ProgramMetrics(registry);
    this.warmer =
        new TurnWarmer(
            router,
            Http.get(system),
            Materializer.matFromSystem(system),
            mapper,
            metrics,
            ledger,
            settings.warmTimeout(),
            settings.warmMaxOthersInFlight(),
            settings.warmMaxUncachedTokens());
    this.tokenizer = tokenizer;
    this.sessions = sessions;
    this.mapper = mapper;
  }

  public ProgramSettings settings() {
    return settings;
  }

  /** The programs this ingress knows (tests). */
  ProgramLedger ledger() {
    return ledger;
  }

  /**
   * The program hints of {@code http}.
   *
   * @throws io.kvrouter.ingress.api.ApiException 400 for a malformed hint
   */
  public ProgramHints hints(HttpRequest http) {
    return ProgramHints.of(http, settings);
  }

  /** {@code request} with its program as its session key (the program header when it has none). */
  public InferenceRequest identify(ProgramHints hints, InferenceRequest request) {
    return request.sessionKey() == null && hints.program() != null
        ? request.withSessionKey(hints.program())
        : request;
  }

  /**
   * What traffic management knows of the request, with its program's rank and, when the client said
   * how long the turn's output will be, that length in place of {@code max_tokens}.
   */
  public RequestTraffic describe(
      RequestTraffic traffic, ProgramHints hints, InferenceRequest request, int promptTokens) {
    long tokens =
        hints.outputTokens() == null
            ? traffic.tokens()
            : promptTokens + (long) hints.outputTokens();
    double rank = settings.admission() ? ledger.rank(request.sessionKey()) : 0;
    return traffic.withTokensAndRank(tokens, rank);
  }

  /**
   * Forwards a turn ({@code forward}) and reads its answer. {@code sent} is the body as the client
   * sent it.
   */
  public CompletionStage<ProxyService.Result> around(
      Endpoint endpoint,
      JsonNode sent,
      InferenceRequest request,
      RequestTraffic traffic,
      ProgramHints hints,
      Supplier<CompletionStage<ProxyService.Result>> forward) {
    String program = request.sessionKey();
    if (program == null
        || !(endpoint == Endpoint.CHAT
            || endpoint == Endpoint.MESSAGES
            || endpoint == Endpoint.RESPONSES)) {
      return forward.get();
    }
    warmer.arrived(program);
    ProgramLedger.Turn turn = ledger.arrived(program);
    return forward
        .get()
        .thenApply(
            result ->
                result instanceof ProxyService.Result.Answered answered
                        && answered.response().status().isSuccess()
                    ? new ProxyService.Result.Answered(
                        read(
                            answered.response(),
                            new Turn(endpoint, sent, request, traffic, hints, turn)))
                    : result);
  }

  /** One turn of a program: what the client sent, and what the ledger knew when it arrived. */
  private record Turn(
      Endpoint endpoint,
      JsonNode sent,
      InferenceRequest request,
      RequestTraffic traffic,
      ProgramHints hints,
      ProgramLedger.Turn known) {}

  /** The response, read as it passes; {@link #replied} once it ended. */
  private HttpResponse read(HttpResponse response, Turn turn) {
    ReplyReader reader = new ReplyReader(turn.endpoint(), turn.request().stream(), mapper);
    String replica = response.getHeader(REPLICA_HEADER).map(h -> h.value()).orElse(null);
    Runnable ended = () -> replied(reader.finish(), replica, turn);
    HttpEntity entity = response.entity();
    if (entity instanceof HttpEntity.Strict strict) {
      reader.feed(strict.getData().toArray());
      ended.run();
      return response;
    }
    return response.withEntity(
        HttpEntities.create(
            entity.getContentType(),
            entity
                .getDataBytes()
                .map(
                    bytes -> {
                      reader.feed(bytes.toArray());
                      return bytes;
                    })
                .watchTermination(
                    (mat, done) -> {
                      done.thenRun(ended);
                      return mat;
                    })));
  }

  private void replied(Reply reply, String replica, Turn turn) {
    InferenceRequest request = turn.request();
    String program = request.sessionKey();
    long fallback = turn.traffic().tokens();
    boolean toolCall =
        turn.hints().toolCall() != null
            ? turn.hints().toolCall()
            : reply != null && reply.toolCall();
    ledger.replied(program, reply == null ? fallback : reply.service(fallback), toolCall);
    metrics.turn(turn.known().continuing() ? "continuing" : "new");
    if (turn.known().continuing() && reply != null && reply.missingTokens() >= 0) {
      metrics.continuing(reply.promptTokens(), reply.missingTokens(), turn.known().warmed());
    }
    if (!toolCall
        || !settings.warm()
        || reply == null
        || request.pinnedReplica() != null
        || !(turn.sent() instanceof ObjectNode body)) {
      return;
    }
    replicaOf(replica, request)
        .thenCompose(
            r ->
                r == null
                    ? CompletableFuture.completedFuture(null)
                    : tokenizer
                        .encoder()
                        .onPool(
                            () ->
                                NextTurn.render(tokenizer, validator, turn.endpoint(), body, reply))
                        .thenApply(prefix -> new Warmable(r, prefix)))
        .whenComplete(
            (found, error) -> {
              if (error != null) {
                metrics.warm("failed");
              } else if (found == null) {
                metrics.warm("skipped_unbound");
              } else if (found.prefix() == null) {
                metrics.warm("skipped_images");
              } else {
                warmer.warm(program, request.model(), found.replica(), found.prefix());
              }
            });
  }

  /** A next turn's prefix ({@code null}: not renderable here) and the replica to warm it on. */
  private record Warmable(String replica, NextTurn.Prefix prefix) {}

  /** The replica the program's turn went to: named by the answer, else its session binding. */
  private CompletionStage<String> replicaOf(String named, InferenceRequest request) {
    if (named != null) {
      return CompletableFuture.completedFuture(named);
    }
    return sessions
        .lookup(SessionRouter.sessionOf(request.model(), request.sessionKey()))
        .thenApply(b -> b == null ? null : b.replica());
  }
}

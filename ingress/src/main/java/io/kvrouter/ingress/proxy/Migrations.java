package io.kvrouter.ingress.proxy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.ingress.api.Endpoint;
import io.kvrouter.ingress.api.EngineExchange;
import io.kvrouter.ingress.api.InferenceRequest;
import io.kvrouter.ingress.metrics.ProxyListener;
import io.kvrouter.ingress.routing.ReplicaQuery;
import io.kvrouter.ingress.routing.RouteOutcome;
import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.routing.Target;
import io.kvrouter.ingress.traffic.RequestTraffic;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.NotUsed;
import org.apache.pekko.stream.Materializer;

/**
 * Gives each streaming OpenAI chat or completions request its {@link StreamMigration}, and places
 * the continuations it asks for: select-and-reserve among the replicas that have not failed the
 * request (as for any request, by the prompt followed by the tokens generated so far), then the
 * engine call; a replica that fails before its first byte is passed over for the next, up to {@link
 * ProxySettings#maxAttempts()}. The reservation on the new replica is held and released by its
 * {@link EngineCall} as any other; the failed replica's was released when its stream ended.
 */
final class Migrations {

  private final Router router;
  private final EngineCall engine;
  private final ProxySettings settings;
  private final ProxyListener listener;
  private final ObjectMapper mapper;
  private final Materializer materializer;
  private final TextTokens tokens;

  Migrations(
      Router router,
      EngineCall engine,
      ProxySettings settings,
      ProxyListener listener,
      ObjectMapper mapper,
      Materializer materializer,
      TextTokens tokens) {
    this.router = router;
    this.engine = engine;
    this.settings = settings;
    this.listener = listener;
    this.mapper = mapper;
    this.materializer = materializer;
    this.tokens = tokens;
  }

  /**
   * What keeps {@code request}'s stream going if its engine dies, or null when it cannot move:
   * migration is off, the answer is not a stream, or not OpenAI chat or completions (Anthropic and
   * Responses streams end with their error event as before).
   */
  StreamMigration forRequest(
      InferenceRequest request, int[] tokenIds, String requestId, RequestTraffic traffic) {
    if (settings.migrationLimit() == 0
        || !request.stream()
        || request.pinnedReplica() != null
        || (request.endpoint() != Endpoint.CHAT && request.endpoint() != Endpoint.COMPLETIONS)) {
      return null;
    }
    return new StreamMigration(
        request,
        tokenIds,
        text -> tokens.encode(request.model(), text),
        settings,
        listener,
        traffic.trace(),
        mapper,
        (body, ids, maxTokens, excluded) ->
            place(request, requestId, continued(traffic), body, ids, maxTokens, excluded, 1));
  }

  /**
   * The request's traffic for a continuation: without its TTFT target, which its first engine met
   * or missed already (the client's first token is long gone), so it is judged once.
   */
  private static RequestTraffic continued(RequestTraffic t) {
    return new RequestTraffic(t.tenant(), t.priority(), t.tokens(), 0, t.arrivalNanos(), t.trace());
  }

  private CompletionStage<StreamMigration.Resumed> place(
      InferenceRequest request,
      String requestId,
      RequestTraffic traffic,
      Function<Target, ObjectNode> body,
      int[] ids,
      int maxTokens,
      Set<String> excluded,
      int attempt) {
    if (attempt > settings.maxAttempts()) {
      return CompletableFuture.failedFuture(
          new EngineCall.AttemptFailed("no replica took the continuation"));
    }
    ReplicaQuery query =
        new ReplicaQuery(
                requestId + "#m" + excluded.size() + "." + attempt,
                request.model(),
                ids,
                maxTokens,
                excluded,
                request.sessionKey(),
                null,
                null)
            .withCacheSalt(ProxyService.cacheSalt(request));
    return router
        .selectAndReserve(query)
        .thenCompose(
            outcome -> {
              if (!(outcome instanceof RouteOutcome.Routed routed)) {
                return CompletableFuture.failedFuture(
                    new EngineCall.AttemptFailed("no replica to continue on: " + outcome));
              }
              String replica = routed.target().replicaId();
              EngineExchange exchange =
                  EngineExchange.continued(request.endpoint(), body.apply(routed.target()));
              return engine
                  .call(new EngineCall.Request(request, ids, traffic, null), routed, exchange)
                  .handle(
                      (result, error) -> {
                        if (error != null) {
                          Set<String> tried = new HashSet<>(excluded);
                          tried.add(replica);
                          return place(
                              request,
                              requestId,
                              traffic,
                              body,
                              ids,
                              maxTokens,
                              tried,
                              attempt + 1);
                        }
                        return resumed(replica, result);
                      })
                  .thenCompose(x -> x);
            });
  }

  /** The new replica's stream, or a failure when it answered with an error. */
  private CompletionStage<StreamMigration.Resumed> resumed(
      String replica, ProxyService.Result result) {
    if (result instanceof ProxyService.Result.Answered answered
        && answered.response().status().isSuccess()) {
      return CompletableFuture.completedFuture(
          new StreamMigration.Resumed(
              replica,
              answered
                  .response()
                  .entity()
                  .getDataBytes()
                  .mapMaterializedValue(m -> NotUsed.getInstance())));
    }
    if (result instanceof ProxyService.Result.Answered answered) {
      answered.response().discardEntityBytes(materializer);
      return CompletableFuture.failedFuture(
          new EngineCall.AttemptFailed(
              "replica " + replica + " answered " + answered.response().status().intValue()));
    }
    return CompletableFuture.failedFuture(new EngineCall.AttemptFailed(String.valueOf(result)));
  }
}

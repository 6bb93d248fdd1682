package io.kvrouter.ingress.pd;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.ingress.api.EngineExchange;
import io.kvrouter.ingress.api.InferenceRequest;
import io.kvrouter.ingress.api.TokenizedPrompt;
import io.kvrouter.ingress.routing.ReplicaQuery;
import io.kvrouter.ingress.routing.RouteOutcome;
import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.routing.Target;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.stream.Materializer;

/**
 * The prefill hop of one disaggregated request: a select-and-reserve over the prefill pool (the
 * node's policy ranks prefill replicas by the prompt's cached prefix against their queued prefill,
 * exactly as it ranks any replica), the one-token prefill request of {@link Handoff}, and the
 * transfer parameters out of its answer. The reservation lives from the decision to the answer: the
 * first byte marks its prefill completed, the answer releases it.
 *
 * <p>A prefill replica that fails (no connection, a non-2xx answer, no usable {@code
 * kv_transfer_params}, no answer within the prefill timeout) is excluded and the next one tried, up
 * to {@link PdSettings#prefillAttempts()}; after that, or when no prefill replica can take it, the
 * hop reports no parameters and the request is decoded where it was placed, prefilled there
 * (Dynamo's frontend falls back to decode-only the same way). Nothing of the hop's state outlives
 * the call: it travels in the arguments of each attempt.
 */
final class PrefillHop {

  /** What the hop produced: transfer parameters and who made them, or the reason there are none. */
  record Outcome(JsonNode transferParams, String prefillReplica, String failure) {
    boolean handedOff() {
      return transferParams != null;
    }
  }

  private final Http http;
  private final Materializer materializer;
  private final Router router;
  private final ObjectMapper mapper;
  private final PdSettings settings;

  PrefillHop(
      Http http, Materializer materializer, Router router, ObjectMapper mapper, PdSettings s) {
    this.http = http;
    this.materializer = materializer;
    this.router = router;
    this.mapper = mapper;
    this.settings = s;
  }

  /** Runs the hop for {@code request} (an OpenAI completions or chat request). */
  CompletionStage<Outcome> run(InferenceRequest request, int[] tokenIds, String hopId) {
    return attempt(request, tokenIds, hopId, 1, Set.of(), null);
  }

  private CompletionStage<Outcome> attempt(
      InferenceRequest request,
      int[] tokenIds,
      String hopId,
      int attempt,
      Set<String> tried,
      String lastFailure) {
    if (attempt > settings.prefillAttempts()) {
      return done(new Outcome(null, null, lastFailure));
    }
    ReplicaQuery query =
        new ReplicaQuery(
                hopId + "/p" + attempt,
                request.model(),
                tokenIds,
                1,
                tried,
                request.sessionKey(),
                null,
                null)
            .withPool(ReplicaQuery.Pool.PREFILL)
            .withImages(TokenizedPrompt.images(request));
    return router
        .selectAndReserve(query)
        .thenCompose(
            outcome -> {
              if (!(outcome instanceof RouteOutcome.Routed routed)) {
                String why =
                    outcome instanceof RouteOutcome.Busy b
                        ? b.reason()
                        : ((RouteOutcome.NoReplica) outcome).reason();
                return done(
                    new Outcome(null, null, lastFailure == null ? why : lastFailure + "; " + why));
              }
              return send(request, tokenIds, routed)
                  .thenCompose(
                      result -> {
                        if (result.handedOff()) {
                          return done(result);
                        }
                        Set<String> more = new HashSet<>(tried);
                        more.add(routed.target().replicaId());
                        return attempt(
                            request, tokenIds, hopId, attempt + 1, more, result.failure());
                      });
            });
  }

  /** One prefill request to the reserved replica; never fails, releases the reservation. */
  private CompletionStage<Outcome> send(
      InferenceRequest request, int[] tokenIds, RouteOutcome.Routed routed) {
    Target target = routed.target();
    byte[] body;
    try {
      body =
          mapper.writeValueAsBytes(
              Handoff.prefillBody(EngineExchange.openAiBody(request, tokenIds, target)));
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      router.released(routed.reservationId());
      return done(new Outcome(null, target.replicaId(), "cannot write the prefill request"));
    }
    HttpRequest post =
        target.addressed(
            HttpRequest.POST(target.baseUrl() + request.endpoint().enginePath())
                .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, body)));
    long timeoutMillis = settings.prefillTimeout().toMillis();
    CompletableFuture<org.apache.pekko.http.javadsl.model.HttpResponse> response =
        http.singleRequest(post).toCompletableFuture();
    CompletableFuture<org.apache.pekko.http.javadsl.model.HttpResponse> timed =
        response.copy().orTimeout(timeoutMillis, TimeUnit.MILLISECONDS);
    timed.whenComplete(
        (r, e) -> {
          if (e != null) {
            // A late answer after the timeout must not hold its connection.
            response.thenAccept(late -> late.discardEntityBytes(materializer));
          }
        });
    return timed
        .thenCompose(
            r ->
                r.entity()
                    .toStrict(timeoutMillis, materializer)
                    .thenApply(
                        strict -> {
                          router.prefillCompleted(routed.reservationId());
                          if (!r.status().isSuccess()) {
                            return new Outcome(
                                null,
                                target.replicaId(),
                                "prefill replica "
                                    + target.replicaId()
                                    + " answered "
                                    + r.status().intValue());
                          }
                          JsonNode params = Handoff.transferParams(parse(strict.getData()));
                          return params == null
                              ? new Outcome(
                                  null,
                                  target.replicaId(),
                                  "prefill replica "
                                      + target.replicaId()
                                      + " returned no kv_transfer_params")
                              : new Outcome(params, target.replicaId(), null);
                        }))
        .exceptionally(
            e ->
                new Outcome(
                    null,
                    target.replicaId(),
                    "prefill replica " + target.replicaId() + " failed: " + rootCause(e)))
        .whenComplete((o, e) -> router.released(routed.reservationId()));
  }

  private JsonNode parse(org.apache.pekko.util.ByteString bytes) {
    try {
      return mapper.readTree(bytes.toArray());
    } catch (java.io.IOException e) {
      return null;
    }
  }

  private static String rootCause(Throwable e) {
    Throwable c = e;
    while (c.getCause() != null && c != c.getCause()) {
      c = c.getCause();
    }
    return c instanceof java.util.concurrent.TimeoutException
        ? "no answer in time"
        : c.getClass().getSimpleName() + " " + c.getMessage();
  }

  private static <T> CompletionStage<T> done(T value) {
    return CompletableFuture.completedFuture(value);
  }
}

package io.kvrouter.ingress.pd;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.ingress.api.Endpoint;
import io.kvrouter.ingress.api.EngineExchange;
import io.kvrouter.ingress.api.InferenceRequest;
import io.kvrouter.ingress.routing.RouteOutcome;
import io.kvrouter.ingress.routing.Router;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.stream.Materializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Prefill/decode disaggregation at the proxy: what is sent to the decode replica a request was
 * placed on.
 *
 * <p>The proxy places every request on a replica that decodes (role {@code decode} or {@code
 * both}), with the node's policy: the prompt's prefix cached there (a continued conversation keeps
 * its decode replica, whose cache holds the turns it decoded and the blocks it pulled) against its
 * load and KV capacity. Then, for a model with prefill replicas, an OpenAI completions or chat
 * request either
 *
 * <ul>
 *   <li>skips the prefill hop, when its prompt is short or mostly cached on that decode replica
 *       ({@link PdSettings#skipReason}): the decode replica prefills it, as an aggregated replica
 *       would; or
 *   <li>takes it ({@link PrefillHop}): a prefill replica chosen by cache overlap and queued prefill
 *       computes the prompt's KV and answers with {@code kv_transfer_params}, which the request
 *       then carries to the decode replica ({@link Handoff}); if no prefill replica manages, the
 *       request is decoded there all the same.
 * </ul>
 *
 * Deciding the decode replica first, then whether to prefill elsewhere, is llm-d's order (its
 * {@code pd-profile-handler} runs the decode profile, then asks its decider, {@code
 * llm-d/llm-d-inference-scheduler pkg/plugins/profile/pd_profile_handler.go}). A failure of the
 * decode replica before its first byte is the proxy's ordinary retry: the request is placed on
 * another decode replica and takes a fresh prefill hop (the prefill replica then finds the prompt
 * in its own cache). Other APIs (Anthropic, Responses) are not disaggregated: vLLM's handshake is
 * defined on completions and chat.
 */
public final class Disaggregation {

  private static final Logger log = LoggerFactory.getLogger(Disaggregation.class);

  private final Router router;
  private final ObjectMapper mapper;
  private final PdSettings settings;
  private final PrefillHop hop;

  public Disaggregation(
      Http http,
      Materializer materializer,
      Router router,
      ObjectMapper mapper,
      PdSettings settings) {
    this.router = router;
    this.mapper = mapper;
    this.settings = settings;
    this.hop = new PrefillHop(http, materializer, router, mapper, settings);
  }

  /** True when {@code request} may be disaggregated at all. */
  boolean applies(InferenceRequest request) {
    return (request.endpoint() == Endpoint.COMPLETIONS || request.endpoint() == Endpoint.CHAT)
        && router.disaggregated(request.model());
  }

  /**
   * The exchange for the decode replica {@code placed}, and how the prompt got there: the ordinary
   * exchange, or, after a prefill hop, the one carrying its transfer parameters. Never fails.
   *
   * @param hopId a unique id for this attempt's prefill hop (its reservations derive from it)
   */
  public CompletionStage<DecodeHop> exchange(
      InferenceRequest request, int[] tokenIds, RouteOutcome.Routed placed, String hopId) {
    EngineExchange plain = EngineExchange.of(request, tokenIds, placed.target(), mapper);
    if (!applies(request)) {
      return CompletableFuture.completedFuture(DecodeHop.straight(plain, DecodeHop.Path.DIRECT));
    }
    String decode = placed.target().replicaId();
    String skip = settings.skipReason(tokenIds.length, placed.predictedCachedTokens());
    if (skip != null) {
      log.debug("{}: prefilled on decode replica {}: {}", request.model(), decode, skip);
      return CompletableFuture.completedFuture(
          DecodeHop.straight(plain, DecodeHop.Path.PREFILL_SKIPPED));
    }
    return hop.run(request, tokenIds, hopId)
        .thenApply(
            outcome -> {
              if (!outcome.handedOff()) {
                log.debug(
                    "{}: prefill failed ({}); prefilled on decode replica {}",
                    request.model(),
                    outcome.failure(),
                    decode);
                return DecodeHop.straight(plain, DecodeHop.Path.PREFILL_FALLBACK);
              }
              return new DecodeHop(
                  EngineExchange.relayed(
                      request.endpoint(),
                      Handoff.decodeBody(
                          EngineExchange.openAiBody(request, tokenIds, placed.target()),
                          outcome.transferParams()),
                      mapper),
                  DecodeHop.Path.PREFILL_DECODE,
                  outcome.prefillReplica());
            });
  }
}

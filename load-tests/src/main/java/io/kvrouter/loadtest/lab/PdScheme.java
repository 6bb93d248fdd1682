package io.kvrouter.loadtest.lab;

import java.util.List;

/**
 * How a router serves a disaggregated cluster: the policy of each pool, which decision comes first,
 * when the prefill hop is skipped, and whether it routes to data-parallel ranks itself.
 *
 * @param name the scheme's name in reports
 * @param prefillPolicy policy ranking the prefill pool ({@code Policies} name)
 * @param decodePolicy policy ranking the decode pool
 * @param decodeFirst true: the decode replica is chosen at arrival and the skip rule reads its
 *     cached prefix (llm-d, kvrouter); false: the prefill runs first and the decode replica is
 *     chosen when it is done (Dynamo)
 * @param skipPromptsUnderTokens prompts shorter than this are prefilled on their decode replica
 * @param skipUncachedUnderTokens so are prompts of which the decode replica lacks fewer tokens
 * @param rankAware true: the router picks the data-parallel rank; false: it picks an engine and the
 *     engine's own balancer picks the least loaded rank (vLLM's {@code DPLBAsyncMPClient}: {@code 4
 *     × waiting + running})
 */
public record PdScheme(
    String name,
    String prefillPolicy,
    String decodePolicy,
    boolean decodeFirst,
    int skipPromptsUnderTokens,
    int skipUncachedUnderTokens,
    boolean rankAware) {

  /**
   * kvrouter: both pools ranked by its own cost (cached prefix against queued work), the decode
   * replica first, the prefill hop skipped under 512 prompt tokens or 256 tokens uncached on the
   * decode replica ({@code kvrouter.ingress.pd} defaults), ranks chosen by the router.
   */
  public static PdScheme kvrouter() {
    return new PdScheme("kvrouter_pd", "kvrouter", "kvrouter", true, 512, 256, true);
  }

  /**
   * Dynamo as it ships (ai-dynamo/dynamo v1.3.0, "Disaggregated Serving" router docs): every
   * request prefilled on a prefill worker chosen by the KV router's cost (overlap weight 1.0; the
   * prefill router tracks no active blocks), then decoded on a worker chosen with overlap scoring
   * off ({@code overlap_score_weight=0}), i.e. by active decode blocks; no skip rule when prefill
   * workers exist. Its router addresses data-parallel ranks ({@code dp_rank} in its worker ids).
   */
  public static PdScheme dynamo() {
    return new PdScheme("dynamo_pd", "dynamo_kv", "dynamo_kv_decode", false, 0, 0, true);
  }

  /**
   * llm-d as it ships (llm-d/llm-d-inference-scheduler {@code
   * pkg/plugins/profile/pd_profile_handler.go}, {@code prefix_based_pd_decider.go}, commit
   * 06c08c0): the decode profile runs first with the precise-prefix scorers, then the prefix-based
   * decider asks for a prefill when the decode pod's uncached suffix reaches {@code
   * nonCachedTokens}, whose default 0 means always; the prefill profile uses the same scorers. Its
   * data-parallel support sends requests to the engine's primary port ({@code primaryPort}), where
   * vLLM balances the ranks.
   */
  public static PdScheme llmd() {
    return new PdScheme("llmd_pd", "llmd_precise", "llmd_precise", true, 0, 0, false);
  }

  /**
   * vLLM's disaggregation proxy (vllm-project/vllm {@code
   * tests/v1/kv_connector/nixl_integration/toy_proxy_server.py}): round robin over each pool, every
   * request disaggregated, ranks left to the engine.
   */
  public static PdScheme vllmProxy() {
    return new PdScheme("vllm_proxy_pd", "round_robin", "round_robin", false, 0, 0, false);
  }

  /** The schemes the lab compares, kvrouter first. */
  public static List<PdScheme> all() {
    return List.of(kvrouter(), dynamo(), llmd(), vllmProxy());
  }

  /** The scheme called {@code name}. */
  public static PdScheme named(String name) {
    return all().stream()
        .filter(s -> s.name().equals(name))
        .findFirst()
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    "unknown PD scheme '"
                        + name
                        + "'; known: "
                        + all().stream().map(PdScheme::name).toList()));
  }
}

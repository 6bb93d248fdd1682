package io.kvrouter.ingress.pd;

import com.typesafe.config.Config;
import java.time.Duration;

/**
 * How the ingress disaggregates prefill and decode, read once from {@code kvrouter.ingress.pd}.
 *
 * @param skipPromptsUnderTokens prompts shorter than this skip the prefill hop (the decode replica
 *     prefills them itself)
 * @param skipUncachedUnderTokens prompts whose part the chosen decode replica lacks is shorter than
 *     this skip the prefill hop too (a continued conversation mostly cached where it decodes)
 * @param prefillAttempts prefill replicas tried per decode attempt before the request falls back to
 *     decode-only (the decode replica prefills it)
 * @param prefillTimeout how long a prefill replica may take to answer its one-token request
 */
public record PdSettings(
    int skipPromptsUnderTokens,
    int skipUncachedUnderTokens,
    int prefillAttempts,
    Duration prefillTimeout) {

  public PdSettings {
    if (skipPromptsUnderTokens < 0 || skipUncachedUnderTokens < 0 || prefillAttempts < 1) {
      throw new IllegalArgumentException(
          "pd thresholds must be >= 0 and prefill-attempts >= 1, were "
              + skipPromptsUnderTokens
              + ", "
              + skipUncachedUnderTokens
              + ", "
              + prefillAttempts);
    }
  }

  /** Reads {@code kvrouter.ingress.pd}. */
  public static PdSettings fromConfig(Config config) {
    Config c = config.getConfig("kvrouter.ingress.pd");
    return new PdSettings(
        c.getInt("skip-prompts-under-tokens"),
        c.getInt("skip-uncached-under-tokens"),
        c.getInt("prefill-attempts"),
        c.getDuration("prefill-timeout"));
  }

  /**
   * Why a request of {@code promptTokens} whose decode replica is predicted to hold {@code
   * cachedOnDecode} of them skips the prefill hop, or null when it takes it. The rule is llm-d's
   * prefix-based decider (llm-d/llm-d-inference-scheduler {@code
   * pkg/plugins/profile/prefix_based_pd_decider.go}: disaggregate only when the decode endpoint's
   * uncached suffix reaches {@code nonCachedTokens}) with a separate floor on the prompt itself.
   */
  public String skipReason(int promptTokens, int cachedOnDecode) {
    if (promptTokens < skipPromptsUnderTokens) {
      return "prompt of " + promptTokens + " tokens is under " + skipPromptsUnderTokens;
    }
    int uncached = promptTokens - Math.min(promptTokens, cachedOnDecode);
    if (uncached < skipUncachedUnderTokens) {
      return uncached
          + " tokens uncached on the decode replica is under "
          + skipUncachedUnderTokens;
    }
    return null;
  }
}

package io.kvrouter.loadtest.bench;

import java.net.URI;

/**
 * One scrape of one engine's {@code /metrics}: the prefix-cache counters summed over their label
 * sets (vLLM labels them by {@code model_name} and {@code engine}). Counters are in tokens (vLLM's
 * {@code vllm/v1/metrics/loggers.py}). A field is {@code null} when the scrape failed or the engine
 * does not export that metric.
 *
 * @param url the scraped URL
 * @param error why the scrape failed, {@code null} if it succeeded
 * @param queries {@code vllm:prefix_cache_queries_total} (or the pre-0.12 {@code
 *     vllm:gpu_prefix_cache_queries_total})
 * @param hits {@code vllm:prefix_cache_hits_total} (or {@code vllm:gpu_prefix_cache_hits_total})
 * @param requestSuccess {@code vllm:request_success_total}, summed over finish reasons
 */
public record EngineSnapshot(
    URI url, String error, Double queries, Double hits, Double requestSuccess) {

  /**
   * Cumulative hit rate hits/queries at this scrape, or {@code null} if unknown or no queries yet.
   */
  public Double cumulativeHitRate() {
    return queries == null || hits == null || queries <= 0 ? null : hits / queries;
  }
}

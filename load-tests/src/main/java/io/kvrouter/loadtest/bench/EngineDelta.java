package io.kvrouter.loadtest.bench;

import java.util.List;

/**
 * What one engine's counters did during a run: before, after, and the run's own hit rate
 * Δhits/Δqueries. Deltas are {@code null} when either scrape failed, the metric is missing, or the
 * counter went backwards (the engine restarted during the run).
 *
 * @param url the engine's metrics URL
 * @param queriesBefore prefix-cache queries (tokens) before the run
 * @param hitsBefore prefix-cache hits (tokens) before the run
 * @param queriesAfter queries after the run
 * @param hitsAfter hits after the run
 * @param deltaQueries queries during the run
 * @param deltaHits hits during the run
 * @param hitRate deltaHits / deltaQueries, {@code null} if no queries during the run
 * @param hitRateBefore cumulative hit rate before the run
 * @param hitRateAfter cumulative hit rate after the run
 * @param deltaRequests {@code vllm:request_success_total} during the run, {@code null} if not
 *     exported
 * @param error scrape errors, {@code null} if both scrapes succeeded
 */
public record EngineDelta(
    String url,
    Double queriesBefore,
    Double hitsBefore,
    Double queriesAfter,
    Double hitsAfter,
    Double deltaQueries,
    Double deltaHits,
    Double hitRate,
    Double hitRateBefore,
    Double hitRateAfter,
    Double deltaRequests,
    String error) {

  /** The delta between two snapshots of the same engine. */
  public static EngineDelta between(EngineSnapshot before, EngineSnapshot after) {
    Double dq = delta(before.queries(), after.queries());
    Double dh = delta(before.hits(), after.hits());
    Double rate = dq == null || dh == null || dq <= 0 ? null : dh / dq;
    String error =
        before.error() == null && after.error() == null
            ? null
            : "before: " + before.error() + "; after: " + after.error();
    return new EngineDelta(
        after.url().toString(),
        before.queries(),
        before.hits(),
        after.queries(),
        after.hits(),
        dq,
        dh,
        rate,
        before.cumulativeHitRate(),
        after.cumulativeHitRate(),
        delta(before.requestSuccess(), after.requestSuccess()),
        error);
  }

  /**
   * Pairs snapshots by position ({@code before.get(i)} and {@code after.get(i)} are one engine).
   */
  public static List<EngineDelta> between(List<EngineSnapshot> before, List<EngineSnapshot> after) {
    if (before.size() != after.size()) {
      throw new IllegalArgumentException(
          "scrape lists differ in size: " + before.size() + " vs " + after.size());
    }
    java.util.ArrayList<EngineDelta> out = new java.util.ArrayList<>(before.size());
    for (int i = 0; i < before.size(); i++) {
      out.add(between(before.get(i), after.get(i)));
    }
    return List.copyOf(out);
  }

  private static Double delta(Double a, Double b) {
    if (a == null || b == null || b < a || a.isNaN() || b.isNaN()) {
      return null;
    }
    return b - a;
  }
}

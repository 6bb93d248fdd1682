package io.kvrouter.loadtest.lab;

import java.util.List;

/**
 * What one policy did in one lab run. Arrays are never mutated after the record is built.
 *
 * @param policy policy name
 * @param hitRate cached prompt tokens ÷ prompt tokens, as the engines count them (at first
 *     admission of each attempt)
 * @param cpuHitRate of those, the tokens loaded back from the engines' CPU tier ÷ prompt tokens (0
 *     without a CPU tier)
 * @param adapterLoads LoRA adapters the engines loaded (0 without adapters)
 * @param blockHitRate leading trace blocks already held by the chosen replica ÷ trace blocks (first
 *     decision of each request), or null when the workload has no trace block ids
 * @param ttft time to first token, from the request's first arrival
 * @param e2e arrival to last token
 * @param throughputRps completed requests ÷ (last finish − first arrival)
 * @param loadMaxOverMean uncached prefill tokens per replica, max ÷ mean
 * @param decisions routing decisions (retries included)
 * @param completed requests that finished
 * @param perReplicaDecisions decisions per replica
 * @param perReplicaPrefillTokens uncached prefill tokens per replica
 * @param decisionsToKilledAfterKill decisions sent to the killed replica after its death (0 when
 *     nothing was killed)
 * @param ttftSortedMillis every TTFT, sorted, for the CDF chart
 * @param loadSeries per-replica uncached prefill tokens per second, one row per sample
 * @param loadSeriesSeconds sample times in seconds
 * @param wallMillis wall time of this policy's simulation
 * @param cpuMillis CPU time of the thread that simulated it
 * @param sessions follow-up, load-spread and tracker-size measures, or null when the workload has
 *     no follow-up request
 * @param programs what it measured of the workload's programs, or null when it has none
 */
public record PolicyResult(
    String policy,
    double hitRate,
    double cpuHitRate,
    long adapterLoads,
    Double blockHitRate,
    Latency ttft,
    Latency e2e,
    double throughputRps,
    double loadMaxOverMean,
    long decisions,
    long completed,
    long[] perReplicaDecisions,
    long[] perReplicaPrefillTokens,
    long decisionsToKilledAfterKill,
    double[] ttftSortedMillis,
    List<double[]> loadSeries,
    double[] loadSeriesSeconds,
    long wallMillis,
    long cpuMillis,
    SessionMeasures sessions,
    ProgramResult programs) {

  /** The same with {@code p} as what it measured of the programs. */
  PolicyResult withPrograms(ProgramResult p) {
    return new PolicyResult(
        policy,
        hitRate,
        cpuHitRate,
        adapterLoads,
        blockHitRate,
        ttft,
        e2e,
        throughputRps,
        loadMaxOverMean,
        decisions,
        completed,
        perReplicaDecisions,
        perReplicaPrefillTokens,
        decisionsToKilledAfterKill,
        ttftSortedMillis,
        loadSeries,
        loadSeriesSeconds,
        wallMillis,
        cpuMillis,
        sessions,
        p);
  }
}

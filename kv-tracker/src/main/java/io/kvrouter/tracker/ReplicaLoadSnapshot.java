package io.kvrouter.tracker;

/**
 * One replica's load as a tracker sees it at one moment (for admin views and metrics).
 *
 * @param inFlight requests reserved and not yet released (all ingresses)
 * @param prefillTokens reserved prompt tokens not yet prefilled
 * @param decodeTokens prompt tokens of requests past their prefill
 * @param waiting engine-reported queue depth
 * @param running engine-reported running requests
 * @param kvUsage engine-reported KV usage, 0 to 1
 */
public record ReplicaLoadSnapshot(
    int inFlight,
    long prefillTokens,
    long decodeTokens,
    int waiting,
    int running,
    double kvUsage) {}

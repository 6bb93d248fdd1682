package io.kvrouter.tracker.ledger;

/**
 * Read-only view of each replica's load, as policies see it. Replicas are the small ints of {@code
 * ReplicaIds}. Counts of this router's own and its peers' reservations come from the ledger; {@code
 * waiting}, {@code running} and {@code kvUsage} are the engine's last report.
 */
public interface LoadView {

  /** The replica's target id, for policies whose choice must agree across routers (hash rings). */
  String id(int replica);

  /** Requests reserved on the replica and not yet released. */
  int inFlight(int replica);

  /** Prompt tokens reserved on the replica that it has not prefilled yet (uncached parts). */
  long prefillTokens(int replica);

  /** Prompt tokens of requests past their prefill: KV the replica holds for decoding. */
  long decodeTokens(int replica);

  /** Prompt tokens of all in-flight requests: the KV footprint they claim. */
  long activeTokens(int replica);

  /** Engine-reported waiting queue depth ({@code vllm:num_requests_waiting}). */
  int waiting(int replica);

  /** Engine-reported running requests ({@code vllm:num_requests_running}). */
  int running(int replica);

  /** Engine-reported KV usage, 0 to 1 ({@code vllm:kv_cache_usage_perc}). */
  double kvUsage(int replica);
}

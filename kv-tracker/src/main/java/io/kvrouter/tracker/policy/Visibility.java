package io.kvrouter.tracker.policy;

/**
 * What a policy's router is allowed to see: a peer's baseline sees only what that peer sees as it
 * ships, so that it does not get kvrouter's synchronisation layer for free. The tracker honours
 * {@link #predictedBlocks}; the policy lab honours all four.
 *
 * @param peerReservations true when the router's ledger receives the other routers' reservations
 *     (kvrouter's reservation plane); false when it counts only the requests it placed itself, as a
 *     gateway without a shared state does
 * @param predictedBlocks true when the prefix index holds predicted entries for blocks a chosen
 *     replica will cache (own and, with {@code peerReservations}, the peers'); false when a replica
 *     that publishes KV events counts only the blocks its events confirmed. Replicas without KV
 *     events are always predicted: there the predictions are the whole index.
 * @param metricsIntervalMillis how often the router refreshes engine load reports (waiting queue,
 *     KV usage); 0 for the deployment's own interval
 * @param globalScheduler true when the peer runs one scheduler for the whole cluster: every request
 *     is decided by the same instance, however many ingresses there are
 */
public record Visibility(
    boolean peerReservations,
    boolean predictedBlocks,
    long metricsIntervalMillis,
    boolean globalScheduler) {

  /** kvrouter's own view: every router's reservations and predicted blocks, metrics as deployed. */
  public static final Visibility FULL = new Visibility(true, true, 0, false);

  /**
   * A gateway that counts only its own in-flight requests and trusts only engine-confirmed blocks,
   * with no engine metrics of its own cadence.
   */
  public static final Visibility OWN_REQUESTS = new Visibility(false, false, 0, false);

  public Visibility {
    if (metricsIntervalMillis < 0) {
      throw new IllegalArgumentException("metricsIntervalMillis must be >= 0");
    }
  }

  /** The same view with engine metrics refreshed every {@code millis}. */
  public Visibility withMetricsInterval(long millis) {
    return new Visibility(peerReservations, predictedBlocks, millis, globalScheduler);
  }

  /** The same view, decided by one scheduler for the whole cluster. */
  public Visibility asGlobalScheduler() {
    return new Visibility(peerReservations, predictedBlocks, metricsIntervalMillis, true);
  }
}

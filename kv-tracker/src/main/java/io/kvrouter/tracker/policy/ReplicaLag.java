package io.kvrouter.tracker.policy;

import java.util.Arrays;

/**
 * How much later than predicted each replica's first tokens have been arriving, and what a decision
 * there is charged for it. The timing model predicts a first token from the prefill queued ahead
 * and the replica's decode load; it does not see a replica that has run out of sequence slots
 * ({@code max_num_seqs}) and holds new requests until running ones finish, nor a slower GPU or a
 * noisy neighbour. Such a replica keeps looking cheapest to the requests that have their prefix
 * there, however long they wait: in the lab (llmd-b2b, seed 3) three replicas ran 256 requests
 * while another ran 52, and fully cached requests waited 200-900 ms for a slot.
 *
 * <p>Per replica this keeps a running mean of observed minus predicted first-token time over this
 * router's own requests (the prediction the decision ranked by, a reload of CPU-held blocks
 * included; weight {@value #ALPHA} for each new one), halved every {@code halfLifeMillis} without
 * news, so a replica that is no longer sent anything is not shunned for long. A decision there is
 * charged the part of that lag above {@code fromMillis}: ordinary prediction error, tens of
 * milliseconds either way, changes no decision.
 *
 * <p>The first {@code warmup} first tokens from each replica, and again after its engine started
 * afresh (a new epoch of its stream), are not counted. A fresh engine, and a fresh router's
 * connections to it, answer the first requests late for reasons that pass (JIT compilation,
 * connection set-up, an engine's first batches): in one CI run a data-parallel engine's four ranks,
 * two requests each, came back late by enough that the lag of one rank outweighed a cached prompt's
 * saving there, and the prompt's repeat went to an idle rank without it.
 *
 * <p>Cost: O(1) per call ({@link FadingValues}). Not thread-safe: owned by its policy.
 */
final class ReplicaLag {

  /** Weight of a new first token in its replica's running lag. */
  static final double ALPHA = 0.3;

  private final double fromMillis;
  private final int warmup;
  private final FadingValues lag;
  private int[] seen = new int[16];

  /**
   * @param fromMillis lag below this is not charged
   * @param halfLifeMillis the lag halves every this many milliseconds without a first token from
   *     the replica; 0 turns the charge off
   * @param warmup this many first tokens from each replica are not counted
   */
  ReplicaLag(double fromMillis, double halfLifeMillis, int warmup) {
    this.fromMillis = fromMillis;
    this.warmup = warmup;
    this.lag = halfLifeMillis > 0 ? new FadingValues(halfLifeMillis) : null;
  }

  /**
   * One of this router's requests got its first token on {@code replica} {@code observedMillis}
   * after its decision, where {@code predictedMillis} had been predicted.
   */
  void observed(int replica, double observedMillis, double predictedMillis, long nowMillis) {
    if (lag == null || replica < 0) {
      return;
    }
    if (replica >= seen.length) {
      seen = Arrays.copyOf(seen, Math.max(replica + 1, seen.length * 2));
    }
    if (seen[replica] < warmup) {
      seen[replica]++;
      return;
    }
    double old = lag.at(replica, nowMillis);
    lag.set(replica, old + ALPHA * (observedMillis - predictedMillis - old), nowMillis);
  }

  /** Milliseconds to add to a decision's cost on {@code replica} at {@code nowMillis}. */
  double charge(int replica, long nowMillis) {
    if (lag == null || lag.last(replica) <= fromMillis) {
      return 0; // the lag only fades from its last value: no need to compute the fade
    }
    return Math.max(0, lag.at(replica, nowMillis) - fromMillis);
  }

  /** The running lag of {@code replica} faded to {@code nowMillis}; 0 until its warm-up is over. */
  double millis(int replica, long nowMillis) {
    return lag == null ? 0 : lag.at(replica, nowMillis);
  }

  /** The replica left, or its engine started afresh: forget its lag and count its warm-up again. */
  void forget(int replica) {
    if (lag != null) {
      lag.forget(replica);
    }
    if (replica >= 0 && replica < seen.length) {
      seen[replica] = 0;
    }
  }
}

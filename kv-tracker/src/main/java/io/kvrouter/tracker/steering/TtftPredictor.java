package io.kvrouter.tracker.steering;

import io.kvrouter.tracker.ledger.LoadView;

/**
 * Predicts a request's time to first token on one replica: how long the prefill work already queued
 * there, plus this request's own uncached prefill, takes. The SLO step of a decision ({@link
 * SteeringRule}) asks it for every candidate; the ingress compares its predictions with the TTFT it
 * then observes.
 *
 * <p>This is the seam for a better model: any implementation over the same {@link LoadView} can
 * replace {@link QueueAheadTtftPredictor} (for example one whose engine timing is fitted online).
 * Implementations are called on the tracker's thread only and must not block.
 */
public interface TtftPredictor {

  /**
   * Milliseconds from now to the first token of a request with {@code uncachedTokens} prompt tokens
   * to prefill on {@code replica}, given the replica's {@code load}.
   */
  double ttftMillis(int replica, int uncachedTokens, LoadView load);
}

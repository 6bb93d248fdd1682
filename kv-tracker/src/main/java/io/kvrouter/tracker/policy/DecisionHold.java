package io.kvrouter.tracker.policy;

/**
 * How long a request waits before it is decided, among several routers, so that decisions taken at
 * the same instant on different routers are taken in order of size.
 *
 * <p>Why: routers that decide at once cannot see each other's reservations for one propagation
 * delay. When a burst reaches several routers, a small request placed blind on the replica where a
 * peer just put a long prompt waits that prompt's whole prefill behind it (seconds, for the
 * conversation trace's 100k-token turns), which one router deciding in sequence never does. A
 * request whose own prefill is long waits a few delays first: by then the smaller requests of the
 * burst have been placed and their reservations received, so the long one goes where it delays no
 * one, and the wait costs it a few percent of its own prefill. Requests are sorted into classes by
 * the compute time of their uncached tokens on their best replica: below {@code fromMillis} none,
 * then one class per doubling, up to {@code classes}; class {@code c} waits {@code c × step} late
 * propagation delays.
 *
 * <p>Cost: O(1). Stateless.
 */
final class DecisionHold {

  private DecisionHold() {}

  /**
   * @param computeMillis the request's own uncached prefill time on its best replica
   * @param fromMillis the smallest that waits; 0 or less: none waits
   * @param classes size classes that wait
   * @param step one class's wait, in delays
   * @param delayMillis the late propagation delay between routers
   * @param maxMillis the longest wait (a skewed clock can make the observed delay large)
   * @return the wait, whole milliseconds (0: decide now)
   */
  static long millis(
      double computeMillis,
      double fromMillis,
      int classes,
      double step,
      double delayMillis,
      double maxMillis) {
    if (fromMillis <= 0 || classes <= 0 || !(computeMillis >= fromMillis)) {
      return 0;
    }
    int size = 1 + (int) Math.floor(Math.log(computeMillis / fromMillis) / Math.log(2));
    return (long) Math.ceil(Math.min(maxMillis, Math.min(classes, size) * step * delayMillis));
  }
}

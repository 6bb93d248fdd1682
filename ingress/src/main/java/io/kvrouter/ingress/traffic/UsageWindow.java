package io.kvrouter.ingress.traffic;

/**
 * The sliding-window estimate behind per-minute limits: counts are kept per fixed window, and the
 * use "over the last window" at a moment {@code f} of the way through the current one is
 *
 * <pre>
 *   estimate = current + previous · (1 − f)
 * </pre>
 *
 * (the previous window's count weighted by how much of it still overlaps the last window). A burst
 * straddling a window boundary thus cannot get twice the limit through, as with fixed windows, and
 * only two counters per window are kept. Cloudflare describes the technique and its accuracy on
 * real traffic ("How we built rate limiting capable of scaling to millions of domains", 2017).
 * Plain arithmetic, no state.
 */
final class UsageWindow {

  private UsageWindow() {}

  /** The estimate of use over the last window. */
  static double estimate(long current, long previous, long elapsedMillis, long windowMillis) {
    double f = Math.min(1.0, Math.max(0.0, elapsedMillis / (double) windowMillis));
    return current + previous * (1 - f);
  }

  /**
   * Milliseconds until {@code amount} more fits under {@code limit}, if nothing else is used
   * meanwhile: later in this window (the previous window's weight fades), or in the next one. An
   * amount above the limit never fits: two windows are returned.
   */
  static long millisUntilFits(
      long limit, long current, long previous, long amount, long elapsedMillis, long windowMillis) {
    if (amount > limit) {
      return 2 * windowMillis;
    }
    double w = windowMillis;
    if (current + amount <= limit) {
      if (previous == 0) {
        return 0;
      }
      double t = w * (1 - (limit - current - amount) / (double) previous) - elapsedMillis;
      return (long) Math.ceil(Math.max(0, t));
    }
    double next = current == 0 ? 0 : w * (1 - (limit - amount) / (double) current);
    return (long) Math.ceil((windowMillis - elapsedMillis) + Math.max(0, next));
  }
}

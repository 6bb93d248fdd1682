package io.kvrouter.loadtest.bench;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Live counts of a run, for the progress display: updated by the runner as requests are sent and
 * finish, read from any thread. Thread-safe; each update is one atomic add.
 */
public final class RunCounters {

  private final AtomicLong sent = new AtomicLong();
  private final AtomicLong ok = new AtomicLong();
  private final AtomicLong errors = new AtomicLong();
  private final AtomicLong timeouts = new AtomicLong();
  private final AtomicLong dropped = new AtomicLong();
  private final AtomicLong outputTokens = new AtomicLong();
  private volatile long startNanos = -1;

  void started(long nanoTime) {
    startNanos = nanoTime;
  }

  void markSent() {
    sent.incrementAndGet();
  }

  void finished(RequestOutcome o) {
    switch (o.status()) {
      case OK -> ok.incrementAndGet();
      case TIMEOUT -> timeouts.incrementAndGet();
      case DROPPED -> dropped.incrementAndGet();
      default -> errors.incrementAndGet();
    }
    outputTokens.addAndGet(
        o.completionTokens() >= 0 ? o.completionTokens() : o.chunkNanos().length);
  }

  /** Requests handed to the HTTP client. */
  public long sent() {
    return sent.get();
  }

  /** Requests that streamed to {@code [DONE]}. */
  public long ok() {
    return ok.get();
  }

  /** Requests that failed (HTTP, stream or send errors). */
  public long errors() {
    return errors.get();
  }

  /** Requests that timed out. */
  public long timeouts() {
    return timeouts.get();
  }

  /** Requests dropped at the concurrency cap. */
  public long dropped() {
    return dropped.get();
  }

  /** Requests sent and not finished yet. */
  public long inFlight() {
    return sent.get() - ok.get() - errors.get() - timeouts.get();
  }

  /** Output tokens received so far (usage figures, else content chunks). */
  public long outputTokens() {
    return outputTokens.get();
  }

  /** Seconds since the run started, 0 before. */
  public double elapsedSeconds() {
    long s = startNanos;
    return s < 0 ? 0 : (System.nanoTime() - s) / 1e9;
  }
}

package io.kvrouter.loadtest.bench;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Shows a run's progress on a stream (stderr in the CLI): on a terminal, a bar redrawn in place
 * five times a second; otherwise a plain line every {@code plainEverySeconds}, so logs stay
 * readable. Reads {@link RunCounters} only; one daemon thread while open.
 */
public final class ProgressReporter implements AutoCloseable {

  private static final int WIDTH = 30;

  private final RunCounters counters;
  private final int expected;
  private final PrintStream out;
  private final boolean interactive;
  private final ScheduledExecutorService ticker;

  /**
   * Starts reporting.
   *
   * @param expected requests expected in the run, or -1 if unknown (no bar, counts only)
   * @param interactive whether {@code out} is a terminal ({@code System.console() != null})
   * @param plainEverySeconds period of the plain lines when not interactive
   */
  public ProgressReporter(
      RunCounters counters,
      int expected,
      PrintStream out,
      boolean interactive,
      long plainEverySeconds) {
    this.counters = counters;
    this.expected = expected;
    this.out = out;
    this.interactive = interactive;
    this.ticker =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "bench-progress");
              t.setDaemon(true);
              return t;
            });
    long periodMillis = interactive ? 200 : Math.max(1, plainEverySeconds) * 1000;
    ticker.scheduleAtFixedRate(this::print, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
  }

  /** One progress line for the current counts (no line terminator). */
  public String line() {
    long done = counters.ok() + counters.errors() + counters.timeouts() + counters.dropped();
    StringBuilder sb = new StringBuilder();
    if (expected > 0) {
      int filled = (int) Math.min(WIDTH, done * WIDTH / expected);
      sb.append('[').append("#".repeat(filled)).append(".".repeat(WIDTH - filled)).append("] ");
      sb.append(done).append('/').append(expected).append(' ');
    } else {
      sb.append(done).append(" done ");
    }
    sb.append(
        String.format(
            Locale.ROOT,
            "ok %d err %d timeout %d drop %d in-flight %d  %.1f s  %d tok",
            counters.ok(),
            counters.errors(),
            counters.timeouts(),
            counters.dropped(),
            counters.inFlight(),
            counters.elapsedSeconds(),
            counters.outputTokens()));
    return sb.toString();
  }

  private void print() {
    if (interactive) {
      out.print("\r" + line() + "   ");
    } else {
      out.println("bench: " + line());
    }
    out.flush();
  }

  /** Prints the final state and stops. */
  @Override
  public void close() {
    ticker.shutdownNow();
    if (interactive) {
      out.println("\r" + line() + "   ");
    } else {
      out.println("bench: " + line());
    }
    out.flush();
  }
}

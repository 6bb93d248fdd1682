package io.kvrouter.agent;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Hands out epochs: strictly increasing within the JVM and, being wall-clock milliseconds at least,
 * larger after an agent restart than before (unless the clock went back by more than the restart
 * took). Thread-safe.
 */
public final class EpochClock {

  private static final AtomicLong LAST = new AtomicLong();

  private EpochClock() {}

  /** A new epoch, greater than every one handed out before in this JVM. */
  public static long next() {
    long now = System.currentTimeMillis();
    return LAST.updateAndGet(prev -> Math.max(prev + 1, now));
  }
}

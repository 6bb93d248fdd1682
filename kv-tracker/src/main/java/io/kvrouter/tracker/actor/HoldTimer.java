package io.kvrouter.tracker.actor;

import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Ends a placement's hold on time. Pekko's scheduler runs its timers on a tick of 10 ms ({@code
 * pekko.scheduler.tick-duration} in pekko-actor's {@code reference.conf}), so a hold of 1-6 ms
 * would last up to 10 ms longer than the policy asked, and two size classes a few milliseconds
 * apart could end on the same tick and lose their order. A 1 ms tick would fix that for every timer
 * of the node at a price: an idle actor system then spends several times the CPU it does at 10 ms.
 * Holds are few (long prompts only) and short, so one daemon thread for the whole JVM, sleeping to
 * each deadline, serves every tracker instead.
 *
 * <p>Cost: one scheduled task per held placement; no thread per tracker, nothing while idle.
 */
final class HoldTimer {

  private static final ScheduledThreadPoolExecutor TIMER = create();

  private HoldTimer() {}

  /** Runs {@code task} on the timer's thread once {@code millis} have passed. */
  static void after(long millis, Runnable task) {
    TIMER.schedule(task, millis, TimeUnit.MILLISECONDS);
  }

  private static ScheduledThreadPoolExecutor create() {
    ScheduledThreadPoolExecutor timer =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "kvrouter-hold-timer");
              t.setDaemon(true);
              return t;
            });
    timer.setRemoveOnCancelPolicy(true);
    return timer;
  }
}

package io.kvrouter.loadtest.lab;

/**
 * The pass a {@link LabEngine} has in flight, in virtual time: one scheduler pass, or a macro pass
 * of k identical pure-decode passes taken at once (the lab engine's stated deviation (3)), which a
 * new arrival cuts short at the first pass boundary at or after it ({@link #interrupt}), so the
 * arrival joins the batch no later than in a pass-by-pass run.
 *
 * <p>Cost: O(1) per call. Not thread-safe: one engine owns it.
 */
final class LabPassClock {

  private boolean busy;
  private long start;
  private long end;
  private int passes;
  private long passMicros;

  /** True while a pass is in flight. */
  boolean busy() {
    return busy;
  }

  /** When the pass in flight ends. */
  long end() {
    return end;
  }

  /** How many identical passes the pass in flight stands for (1 unless it is a macro pass). */
  int passes() {
    return passes;
  }

  /** Starts one pass of {@code durationMicros} (at least 1) at {@code nowMicros}; its end. */
  long startOne(long nowMicros, long durationMicros) {
    return start(nowMicros, 1, Math.max(1, durationMicros));
  }

  /** Starts {@code count} passes of {@code passMicros} (at least 1) each at once; their end. */
  long startMacro(long nowMicros, int count, long passMicros) {
    return start(nowMicros, count, Math.max(1, passMicros));
  }

  private long start(long nowMicros, int count, long micros) {
    busy = true;
    passes = count;
    passMicros = micros;
    start = nowMicros;
    end = nowMicros + count * micros;
    return end;
  }

  /**
   * A new arrival at {@code nowMicros} during a macro pass: cut it at the first pass boundary at or
   * after now. Returns true when the end moved (the caller reschedules).
   */
  boolean interrupt(long nowMicros) {
    if (!busy || passes <= 1 || nowMicros >= end) {
      return false;
    }
    long done = Math.max(1, (nowMicros - start + passMicros - 1) / passMicros);
    if (done >= passes) {
      return false;
    }
    passes = (int) done;
    end = start + done * passMicros;
    return true;
  }

  /** The pass in flight is over (completed, or the engine died, or it had nothing to run). */
  void stop() {
    busy = false;
  }
}

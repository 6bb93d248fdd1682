package io.kvrouter.loadtest.lab;

import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.protocol.KvEventBatch;
import java.util.function.IntFunction;

/** Drives one {@link LabEngine} over a workload's requests in arrival order, for tests. */
final class LabEngineDrive {

  /** Receives each pass's KV-event batch with the pass's end. */
  @FunctionalInterface
  interface BatchSink {
    void batch(long passEndMicros, KvEventBatch batch);
  }

  private LabEngineDrive() {}

  /**
   * Submits request i with the keys {@code keysOf.apply(i)} at its arrival, cuts a macro pass at
   * the next arrival and runs passes until every request finished; non-null batches go to {@code
   * sink}.
   */
  static void run(Workload w, IntFunction<long[]> keysOf, LabEngine engine, BatchSink sink) {
    int next = 0;
    long now = w.get(0).arrivalMicros();
    while (next < w.size() || engine.hasWork()) {
      while (next < w.size() && w.get(next).arrivalMicros() <= now) {
        engine.submit(
            new LabSequence(
                next,
                "q" + next,
                0,
                keysOf.apply(next),
                w.get(next).inputLength(),
                w.get(next).outputLength(),
                w.get(next).arrivalMicros()));
        next++;
      }
      if (!engine.hasWork()) {
        now = w.get(next).arrivalMicros();
        continue;
      }
      long end = engine.startPass(now);
      if (next < w.size() && w.get(next).arrivalMicros() < end) {
        engine.interrupt(w.get(next).arrivalMicros());
      }
      now = engine.passEnd();
      KvEventBatch batch = engine.completePass();
      if (batch != null) {
        sink.batch(now, batch);
      }
    }
  }
}

package io.kvrouter.agent.kvevents;

import io.kvrouter.protocol.engine.EngineEventBatch;

/**
 * The handler of a {@link KvEventSubscriber}, with the seq of the batch it is being given (to
 * report it lost when that fails) and of the last one it took. Subscriber thread only.
 */
final class Delivery implements EngineStreamHandler {
  private final EngineStreamHandler handler;
  private long delivering = -1;
  private long delivered = -1;
  private boolean sinceFailure;

  Delivery(EngineStreamHandler handler) {
    this.handler = handler;
  }

  @Override
  public void onBatch(long seq, EngineEventBatch batch) {
    delivering = seq;
    handler.onBatch(seq, batch);
    delivered = seq;
    delivering = -1;
    sinceFailure = true;
  }

  @Override
  public void onEngineRestart(long lastSeq, long newSeq) {
    delivered = -1;
    handler.onEngineRestart(lastSeq, newSeq);
  }

  @Override
  public void onUnrecoverableGap(long fromSeq, long toSeq) {
    handler.onUnrecoverableGap(fromSeq, toSeq);
  }

  /**
   * A failure happened: the batch it interrupted (the one being handed over, else the one after the
   * last taken, which the decoder may have dropped).
   */
  long failed() {
    long lost = delivering >= 0 ? delivering : delivered + 1;
    delivering = -1;
    return lost;
  }

  /** True when a batch was taken since the last failure (a failure in a row otherwise). */
  boolean deliveredSinceFailure() {
    boolean d = sinceFailure;
    sinceFailure = false;
    return d;
  }
}

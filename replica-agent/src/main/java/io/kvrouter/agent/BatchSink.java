package io.kvrouter.agent;

import io.kvrouter.protocol.KvEventBatch;

/**
 * Where stamped batches go: the cluster topic {@code kvrouter-kv-events} in the agent, a list in
 * tests. Called from the thread that stamps (a subscriber thread or an actor); implementations must
 * be thread-safe and must not block.
 */
@FunctionalInterface
public interface BatchSink {
  void publish(KvEventBatch batch);
}

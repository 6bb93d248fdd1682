package io.kvrouter.agent;

import io.kvrouter.agent.kvevents.EngineStreamHandler;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaCleared;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.ReplicaSnapshot;
import io.kvrouter.protocol.engine.EngineEvent;
import io.kvrouter.protocol.engine.EngineEventBatch;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One replica's event plane in the agent, in plain Java: engine batches in (from a {@link
 * io.kvrouter.agent.kvevents.KvEventSubscriber}), router batches out (to a {@link BatchSink}),
 * stamped by a {@link StampedEventLog} after an {@link EngineKeyBridge} translated them.
 *
 * <p>Contract: each epoch opens with a batch {@code [ReplicaCleared]} at seq 0 (so trackers drop
 * what an earlier agent or engine told them); an engine restart or an unrecoverable gap opens a new
 * epoch (the agent's picture is rebuilt from the engine's next events); engine batches that
 * translate to nothing are not stamped. {@link #replay} serves the ring or returns empty, and
 * {@link #snapshot} gives the fallback.
 *
 * <p>All methods are synchronized: the subscriber thread feeds it and the agent actor reads replays
 * and snapshots; each call is short and does no I/O. Cost per batch: that of the bridge plus O(1).
 */
public final class ReplicaEventPipeline implements EngineStreamHandler {

  private static final Logger log = LoggerFactory.getLogger(ReplicaEventPipeline.class);

  private final EngineKeyBridge bridge;
  private final StampedEventLog stamps;
  private final BatchSink sink;
  private long engineBatches;
  private long restarts;
  private long lostBatches;
  private Consumer<EngineEvent.BlockStored> rootWatcher;

  /**
   * @param replicaId the routable target id
   * @param keys router key function
   * @param blockSize the replica's block size
   * @param ringCapacity stamped batches kept for replay
   * @param knownHashes engine hashes remembered for parent lookup
   * @param sink where stamped batches go
   */
  public ReplicaEventPipeline(
      String replicaId,
      RouterKeyFunction keys,
      int blockSize,
      int ringCapacity,
      int knownHashes,
      BatchSink sink) {
    this.bridge = new EngineKeyBridge(keys, blockSize, knownHashes);
    this.stamps = new StampedEventLog(replicaId, EpochClock.next(), ringCapacity);
    this.sink = sink;
    emit(new KvEvent[] {new ReplicaCleared()});
  }

  @Override
  public synchronized void onBatch(long seq, EngineEventBatch batch) {
    engineBatches++;
    // A local copy: the watcher may unwatch itself from inside accept (same thread, same lock),
    // and a batch can hold several root blocks (a CPU-tier copy is stored as a root too).
    Consumer<EngineEvent.BlockStored> watcher = rootWatcher;
    if (watcher != null) {
      for (EngineEvent e : batch.events()) {
        if (e instanceof EngineEvent.BlockStored s && s.parentHash() == null) {
          watcher.accept(s);
        }
      }
    }
    List<KvEvent> events = bridge.translate(batch.events());
    if (!events.isEmpty()) {
      emit(events.toArray(KvEvent[]::new));
    }
  }

  @Override
  public synchronized void onEngineRestart(long lastSeq, long newSeq) {
    restarts++;
    restartEpoch();
  }

  @Override
  public synchronized void onUnrecoverableGap(long fromSeq, long toSeq) {
    lostBatches += toSeq - fromSeq;
    log.warn(
        "{}: engine batches [{}, {}) lost; starting a new epoch",
        stamps.replicaId(),
        fromSeq,
        toSeq);
    restartEpoch();
  }

  /**
   * Opens a new epoch and forgets the replica's blocks: for an engine restart seen some other way
   * (health check), or an agent-side reset.
   */
  public synchronized void restartEpoch() {
    bridge.clear();
    stamps.newEpoch(EpochClock.next());
    emit(new KvEvent[] {new ReplicaCleared()});
  }

  private void emit(KvEvent[] events) {
    sink.publish(stamps.append(events));
  }

  /**
   * Hands every BlockStored that starts at block 0 (no parent) to {@code watcher}, on the
   * subscriber's thread, until {@link #unwatchRoots}: how the alignment probe sees what the engine
   * stored for its prompt. One watcher at a time (a new one replaces the last); it must be quick
   * and thread-safe.
   */
  public synchronized void watchRoots(Consumer<EngineEvent.BlockStored> watcher) {
    rootWatcher = watcher;
  }

  /** Removes {@code watcher} if it is still the one installed. */
  public synchronized void unwatchRoots(Consumer<EngineEvent.BlockStored> watcher) {
    if (rootWatcher == watcher) {
      rootWatcher = null;
    }
  }

  /** Stamped batches of {@code epoch} from {@code fromSeq}, or empty: send {@link #snapshot}. */
  public synchronized Optional<List<KvEventBatch>> replay(long epoch, long fromSeq) {
    return stamps.replay(epoch, fromSeq);
  }

  /** The replica's whole state as of the last stamped batch. */
  public synchronized ReplicaSnapshot snapshot() {
    return new ReplicaSnapshot(
        stamps.replicaId(), stamps.epoch(), stamps.nextSeq() - 1, bridge.snapshot());
  }

  public synchronized long epoch() {
    return stamps.epoch();
  }

  /** The heartbeat's view of the stream: {@code load} stamped with this epoch and last seq. */
  public synchronized ReplicaLoad stamp(ReplicaLoad load) {
    return new ReplicaLoad(
        load.replicaId(),
        stamps.epoch(),
        load.running(),
        load.waiting(),
        load.kvUsage(),
        load.prefixQueries(),
        load.prefixHits(),
        load.timestampMillis(),
        stamps.nextSeq() - 1);
  }

  public synchronized long nextSeq() {
    return stamps.nextSeq();
  }

  /** Engine batches received so far. */
  public synchronized long engineBatches() {
    return engineBatches;
  }

  /** Engine restarts detected so far. */
  public synchronized long engineRestarts() {
    return restarts;
  }

  /** Engine batches lost for good so far. */
  public synchronized long lostBatches() {
    return lostBatches;
  }

  /** Stored runs the bridge could not resolve. */
  public synchronized long unresolved() {
    return bridge.unresolved();
  }
}

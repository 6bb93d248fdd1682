package io.kvrouter.tracker.feed;

import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaCleared;
import io.kvrouter.protocol.ReplicaSnapshot;
import io.kvrouter.protocol.WindowBlocks;
import io.kvrouter.tracker.index.PrefixIndex;
import io.kvrouter.tracker.index.ReplicaIds;

/**
 * The replicas' KV event streams into one prefix index, each applied in its replica's order: a
 * batch is applied only when it is the next one of its replica ({@link EventSequencer}), a later
 * epoch clears the replica first, a batch that arrives early is held a while ({@link
 * BatchReorderBuffer}) in case it was only reordered, and a snapshot replaces the replica's state
 * and moves its watermark. The caller repairs what this class reports: a {@link
 * EventSequencer.Outcome#GAP} verdict or a {@link #behind} gap means "ask the agent to replay".
 *
 * <p>Batches of replicas the index does not know yet are applied all the same (their ids are
 * interned): events may precede the membership listing.
 *
 * <p>Cost: one sequencer lookup per batch plus the index's cost per event; a held batch costs O(log
 * b). Not thread-safe: the tracker's owner calls it.
 */
public final class ReplicaFeed {

  /** Early batches held per replica; beyond that, the replay brings them. */
  private static final int MAX_EARLY_PER_REPLICA = 64;

  private final PrefixIndex index;
  private final ReplicaIds ids;
  private final EventSequencer sequencer = new EventSequencer();
  private final BatchReorderBuffer early = new BatchReorderBuffer(MAX_EARLY_PER_REPLICA);

  /**
   * @param index the index the events are applied to
   * @param ids the replica ids shared with the index's other users
   */
  public ReplicaFeed(PrefixIndex index, ReplicaIds ids) {
    this.index = index;
    this.ids = ids;
  }

  /** Applies a batch if it is its replica's next one, and then any held batches that follow it. */
  public EventSequencer.Verdict apply(KvEventBatch batch) {
    EventSequencer.Verdict verdict = applyOne(batch);
    if (verdict.outcome() == EventSequencer.Outcome.GAP && verdict.epoch() == batch.epoch()) {
      early.hold(batch); // maybe only reordered: applied as soon as the missing ones come
    } else if (applied(verdict)) {
      if (verdict.outcome() == EventSequencer.Outcome.NEW_EPOCH) {
        early.clear(batch.replicaId());
      }
      drainEarly(batch.replicaId(), verdict.epoch(), verdict.expectedSeq());
    }
    return verdict;
  }

  /**
   * An agent's heartbeat says its stream of the replica stands at {@code (epoch, lastSeq)}: returns
   * the gap to repair when this feed is behind it (lost last batches, which no later batch would
   * reveal), or null.
   */
  public GapDetected behind(String replicaId, long epoch, long lastSeq) {
    if (lastSeq < 0) {
      return null;
    }
    EventSequencer.Watermark w = sequencer.watermark(replicaId);
    if (w == null || epoch > w.epoch()) {
      return new GapDetected(replicaId, epoch, 0);
    }
    if (epoch == w.epoch() && lastSeq > w.seq()) {
      return new GapDetected(replicaId, epoch, w.seq() + 1);
    }
    return null;
  }

  /**
   * Replaces the replica's state by an agent's snapshot (the answer to a replay the ring buffer
   * could no longer serve, or a late joiner's bootstrap) and continues after its last seq.
   *
   * @return true when the snapshot moved a replica this feed knew to a later epoch, as a {@link
   *     EventSequencer.Outcome#NEW_EPOCH} batch does
   */
  public boolean installSnapshot(ReplicaSnapshot snapshot) {
    EventSequencer.Watermark before = sequencer.watermark(snapshot.replicaId());
    int replica = ids.intern(snapshot.replicaId());
    index.clearReplica(replica);
    for (KvEvent event : snapshot.events()) {
      applyEvent(replica, event);
    }
    sequencer.reset(snapshot.replicaId(), snapshot.epoch(), snapshot.lastSeq());
    drainEarly(snapshot.replicaId(), snapshot.epoch(), snapshot.lastSeq() + 1);
    return before != null && snapshot.epoch() > before.epoch();
  }

  /** The replica's watermark, or {@code null} before its first batch. */
  public EventSequencer.Watermark watermark(String replicaId) {
    return sequencer.watermark(replicaId);
  }

  /** The replica left: its watermark is forgotten (a new incarnation starts from scratch). */
  public void forget(String replicaId) {
    sequencer.forget(replicaId);
  }

  private static boolean applied(EventSequencer.Verdict v) {
    return v.outcome() == EventSequencer.Outcome.APPLY
        || v.outcome() == EventSequencer.Outcome.NEW_EPOCH;
  }

  private void drainEarly(String replicaId, long epoch, long nextSeq) {
    KvEventBatch next;
    while ((next = early.take(replicaId, epoch, nextSeq)) != null) {
      nextSeq = applyOne(next).expectedSeq();
    }
  }

  private EventSequencer.Verdict applyOne(KvEventBatch batch) {
    EventSequencer.Verdict verdict = sequencer.admit(batch.replicaId(), batch.epoch(), batch.seq());
    int replica = ids.intern(batch.replicaId());
    if (verdict.clearFirst()) {
      index.clearReplica(replica);
    }
    if (applied(verdict)) {
      for (KvEvent event : batch.events()) {
        applyEvent(replica, event);
      }
    }
    return verdict;
  }

  private void applyEvent(int replica, KvEvent event) {
    if (event instanceof BlocksStored s) {
      index.store(replica, s);
    } else if (event instanceof BlocksRemoved r) {
      index.remove(replica, r);
    } else if (event instanceof ReplicaCleared) {
      index.clearReplica(replica);
    } else if (event instanceof WindowBlocks w) {
      index.window(replica, w);
    }
  }
}

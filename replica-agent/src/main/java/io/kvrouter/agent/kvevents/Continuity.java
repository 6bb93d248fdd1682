package io.kvrouter.agent.kvevents;

import java.time.Duration;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The evidence a {@link StreamSequencer} weighs after an interruption: is the engine it hears still
 * the process it heard before? Holds the checkpoint (the last batch delivered before the
 * interruption, by seq and payload digest) and the process start times the health checks reported,
 * and judges a replay answer against them. Free of sockets and of delivery.
 *
 * <p>Not thread-safe: its sequencer's thread drives it.
 */
final class Continuity {

  /** What the evidence shows. */
  enum Proof {
    /** The same process, nothing delivered lost. */
    SAME,
    /** Another process. */
    RESTARTED,
    /** Nothing can tell: treated as a restart. */
    UNPROVEN,
    /** Not yet known: ask again. */
    UNANSWERED
  }

  private enum StartTimeEvidence {
    NONE,
    SAME,
    ABSENT
  }

  private record Checkpoint(long seq, long digest) {}

  private final long giveUpAfterNanos;
  private final LongSupplier nanoClock;
  private boolean interrupted;
  private long since;
  private boolean holdLive;
  private Checkpoint checkpoint;
  private StartTimeEvidence startEvidence = StartTimeEvidence.NONE;
  private double startTime = Double.NaN;
  private boolean adoptNextStartTime;
  private boolean healthObserved;

  /**
   * @param giveUpAfter how long an interruption may wait for its proof before it is overdue
   * @param nanoClock monotonic nanoseconds
   */
  Continuity(Duration giveUpAfter, LongSupplier nanoClock) {
    this.giveUpAfterNanos = giveUpAfter.toNanos();
    this.nanoClock = nanoClock;
  }

  /**
   * An interruption: pins the checkpoint unless one is pending already.
   *
   * @param dropped the connection dropped (live batches must wait for the verdict)
   * @return true when this starts a new interruption
   */
  boolean interrupt(DeliveredDigests recent, boolean dropped) {
    holdLive |= dropped;
    if (interrupted) {
      return false;
    }
    interrupted = true;
    since = nanoClock.getAsLong();
    checkpoint =
        recent.isEmpty() ? null : new Checkpoint(recent.newestSeq(), recent.newestDigest());
    startEvidence = StartTimeEvidence.NONE;
    return true;
  }

  /**
   * A health check answered, with the engine's process start time or NaN.
   *
   * @return true when the start time changed: another process, whatever else is pending
   */
  boolean observe(double processStartSeconds) {
    healthObserved = true;
    if (Double.isNaN(processStartSeconds)) {
      if (interrupted) {
        startEvidence = StartTimeEvidence.ABSENT;
      }
      return false;
    }
    if (adoptNextStartTime) {
      if (processStartSeconds != startTime) {
        startTime = processStartSeconds; // the new process's, first reported
        adoptNextStartTime = false;
      }
      return false; // else a report about the old process, queued before its end was known
    }
    boolean changed = !Double.isNaN(startTime) && processStartSeconds != startTime;
    startTime = processStartSeconds;
    if (interrupted && !changed) {
      startEvidence = StartTimeEvidence.SAME;
    }
    return changed;
  }

  boolean interrupted() {
    return interrupted;
  }

  /** True when the pending interruption has waited longer than {@code giveUpAfter}. */
  boolean overdue() {
    return interrupted && nanoClock.getAsLong() - since > giveUpAfterNanos;
  }

  /** How long the pending interruption has waited, for log lines. */
  String waited() {
    return (nanoClock.getAsLong() - since) / 1_000_000 + " ms";
  }

  /** True while live batches must wait for the verdict (the connection dropped). */
  boolean holdLive() {
    return interrupted && holdLive;
  }

  /**
   * The verdict without a replay, or null when a replay from {@link #checkpointSeq()} must decide.
   *
   * @param replayUsable the engine has a replay socket that has not been given up on
   */
  Proof withoutReplay(boolean replayUsable) {
    if (checkpoint == null || startEvidence == StartTimeEvidence.SAME) {
      return Proof.SAME; // nothing delivered, or the same process: nothing to lose
    }
    if (replayUsable) {
      return null;
    }
    if (startEvidence == StartTimeEvidence.ABSENT || !healthObserved) {
      return Proof.UNPROVEN;
    }
    return Proof.UNANSWERED; // the next health check brings the start time
  }

  long checkpointSeq() {
    return checkpoint.seq();
  }

  /**
   * Judges the engine's whole answer to a replay from {@link #checkpointSeq()}: its batch at that
   * seq must be byte for byte the one delivered (vLLM buffers the very bytes it published, and each
   * batch carries its creation time, so another process cannot repeat it).
   */
  Proof judge(List<TransportFrames.Message> batches) {
    for (TransportFrames.Message b : batches) {
      if (b.seq() == checkpoint.seq()) {
        return DeliveredDigests.digest(b.payload()) == checkpoint.digest()
            ? Proof.SAME
            : Proof.RESTARTED;
      }
      if (b.seq() > checkpoint.seq()) {
        return Proof.UNPROVEN; // the batch fell out of the engine's buffer
      }
    }
    return Proof.RESTARTED; // the engine's stream is shorter than what was delivered
  }

  /**
   * A new engine process was found (by whatever evidence): the first start time reported that is
   * not the old process's is the new one's, not another change; reports of the old one's (sent
   * before its end was known) are ignored.
   */
  void newProcess() {
    adoptNextStartTime = !Double.isNaN(startTime);
    end();
  }

  /** The new process was found by its start time: that one is already the new process's. */
  void startTimeKnown() {
    adoptNextStartTime = false;
  }

  /** The interruption is settled (either way). */
  void end() {
    interrupted = false;
    holdLive = false;
    checkpoint = null;
    startEvidence = StartTimeEvidence.NONE;
  }
}

package io.kvrouter.tracker.feed;

import java.util.HashMap;
import java.util.Map;

/**
 * Per-replica watermark of applied event batches, {@code (epoch, seq)}, and the verdict on each
 * arriving batch. It holds the rule "a tracker's state of a replica is a pure function of the
 * prefix of that replica's stream it applied" ({@code docs/architecture.md}, "Consistency,
 * stated"): a batch is applied only if it is the next one.
 *
 * <ul>
 *   <li>{@link Outcome#APPLY}: the next batch of the current epoch;
 *   <li>{@link Outcome#NEW_EPOCH}: seq 0 of a later epoch: clear the replica, then apply;
 *   <li>{@link Outcome#DUPLICATE}: already applied; ignore;
 *   <li>{@link Outcome#STALE}: from an earlier epoch; ignore;
 *   <li>{@link Outcome#GAP}: later than the next one (or a later epoch not starting at 0): ignore
 *       and ask the agent to replay from {@link Verdict#expectedSeq()} (the event plane's job). A
 *       gap in a later epoch also clears the replica: the old epoch's state is void.
 * </ul>
 *
 * Cost: one HashMap lookup per batch. Not thread-safe.
 */
public final class EventSequencer {

  /** What to do with a batch. */
  public enum Outcome {
    APPLY,
    NEW_EPOCH,
    DUPLICATE,
    STALE,
    GAP
  }

  /**
   * The verdict, the seq expected next (after the batch if it was applied), and whether the
   * replica's state must be cleared first (a later epoch of a known replica).
   */
  public record Verdict(Outcome outcome, long epoch, long expectedSeq, boolean clearFirst) {}

  /** A replica's watermark: the epoch and the last applied seq (-1 before any). */
  public record Watermark(long epoch, long seq) {}

  private final Map<String, long[]> marks = new HashMap<>();

  /** Judges a batch and, when it is to be applied, advances the watermark. */
  public Verdict admit(String replicaId, long epoch, long seq) {
    long[] mark = marks.get(replicaId);
    if (mark == null || epoch > mark[0]) {
      boolean known = mark != null;
      mark = new long[] {epoch, -1};
      marks.put(replicaId, mark);
      if (seq != 0) {
        return new Verdict(Outcome.GAP, epoch, 0, known);
      }
      mark[1] = 0;
      return new Verdict(known ? Outcome.NEW_EPOCH : Outcome.APPLY, epoch, 1, known);
    }
    if (epoch < mark[0]) {
      return new Verdict(Outcome.STALE, mark[0], mark[1] + 1, false);
    }
    if (seq <= mark[1]) {
      return new Verdict(Outcome.DUPLICATE, epoch, mark[1] + 1, false);
    }
    if (seq > mark[1] + 1) {
      return new Verdict(Outcome.GAP, epoch, mark[1] + 1, false);
    }
    mark[1] = seq;
    return new Verdict(Outcome.APPLY, epoch, seq + 1, false);
  }

  /** Sets the watermark after a snapshot of the replica was installed. */
  public void reset(String replicaId, long epoch, long seq) {
    marks.put(replicaId, new long[] {epoch, seq});
  }

  /** The replica's watermark, or {@code null} if none. */
  public Watermark watermark(String replicaId) {
    long[] mark = marks.get(replicaId);
    return mark == null ? null : new Watermark(mark[0], mark[1]);
  }

  public void forget(String replicaId) {
    marks.remove(replicaId);
  }
}

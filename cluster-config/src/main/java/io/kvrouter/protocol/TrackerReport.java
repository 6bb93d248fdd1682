package io.kvrouter.protocol;

import java.util.Arrays;
import java.util.Objects;

/**
 * A tracker's {@link TrackerView} with what the view's wire record cannot carry (Kryo records never
 * change their components, see {@code WireCompatibilityTest}): per replica the holdings this
 * tracker's index memory budget evicted ({@code trims}), and how its ingress's predictions of
 * cached tokens fared against what the engines reported ({@code accuracy}). Converged and accurate
 * are two things: trackers can agree with each other on a picture the engine does not hold. The
 * answer to {@link GetTrackerReport}. Arrays are never mutated after the record is built.
 */
public record TrackerReport(TrackerView view, Trim[] trims, Accuracy[] accuracy)
    implements KryoWire {

  private static final Trim[] NO_TRIMS = new Trim[0];
  private static final Accuracy[] NO_ACCURACY = new Accuracy[0];

  /** A report of a view alone: nothing trimmed, no accuracy figures. */
  public static TrackerReport of(TrackerView view) {
    return new TrackerReport(view, NO_TRIMS, NO_ACCURACY);
  }

  /** The same report with this ingress's accuracy figures. */
  public TrackerReport withAccuracy(Accuracy[] figures) {
    return new TrackerReport(view, trims, figures);
  }

  /** Holdings of {@code replicaId} this tracker evicted, 0 when none. */
  public long trimmed(String replicaId) {
    for (Trim t : trims) {
      if (t.replicaId().equals(replicaId)) {
        return t.evicted();
      }
    }
    return 0;
  }

  /**
   * Holdings of a replica this tracker's index memory budget evicted since the replica's state was
   * last cleared: while positive, the tracker's digest of the replica is of what it still holds,
   * not of the replica's stream, and is not comparable with other trackers'.
   */
  public record Trim(String replicaId, long evicted) implements KryoWire {}

  /**
   * How one ingress's predictions of a replica's cached tokens fared against the engine's reports
   * over its last requests there.
   *
   * @param samples requests in the window
   * @param misses requests where prediction and report disagreed beyond the tolerance
   * @param alerting true while this ingress flags the replica as inaccurate
   */
  public record Accuracy(String replicaId, int samples, int misses, boolean alerting)
      implements KryoWire {}

  @Override
  public boolean equals(Object o) {
    return o instanceof TrackerReport r
        && view.equals(r.view)
        && Arrays.equals(trims, r.trims)
        && Arrays.equals(accuracy, r.accuracy);
  }

  @Override
  public int hashCode() {
    return Objects.hash(view, Arrays.hashCode(trims), Arrays.hashCode(accuracy));
  }

  @Override
  public String toString() {
    return "TrackerReport["
        + view
        + ", trims="
        + trims.length
        + ", accuracy="
        + accuracy.length
        + "]";
  }
}

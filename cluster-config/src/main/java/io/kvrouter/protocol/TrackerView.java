package io.kvrouter.protocol;

import java.util.Arrays;
import java.util.Objects;

/**
 * One tracker's watermarks and digests at one moment: per replica the last applied {@code (epoch,
 * seq)} with its block count and digest, per origin ingress the last applied reservation seq with
 * its open-reservation count and digest. Two trackers at equal watermarks must report equal digests
 * (ARCHITECTURE.md, "Consistency, stated"). Beside it, how this ingress's predictions fared against
 * what the engines reported ({@code accuracy}): converged and accurate are two things. Arrays are
 * never mutated after the record is built.
 */
public record TrackerView(
    String ingressId,
    long atMillis,
    ReplicaMark[] replicas,
    OriginMark[] origins,
    boolean ready,
    Accuracy[] accuracy)
    implements KryoWire {

  /** A view without accuracy figures (the tracker's own; its ingress adds them). */
  public TrackerView(
      String ingressId,
      long atMillis,
      ReplicaMark[] replicas,
      OriginMark[] origins,
      boolean ready) {
    this(ingressId, atMillis, replicas, origins, ready, new Accuracy[0]);
  }

  /** The same view with this ingress's accuracy figures. */
  public TrackerView withAccuracy(Accuracy[] figures) {
    return new TrackerView(ingressId, atMillis, replicas, origins, ready, figures);
  }

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

  /**
   * A replica's watermark and block digest in one tracker.
   *
   * @param trimmed holdings this tracker's index memory budget evicted since the replica's state
   *     was last cleared: while positive, the digest is of what this tracker still holds, not of
   *     the replica's stream, and is not comparable with other trackers'
   */
  public record ReplicaMark(
      String replicaId, long epoch, long seq, long blocks, long digest, long trimmed)
      implements KryoWire {

    /** A mark of an untrimmed replica. */
    public ReplicaMark(String replicaId, long epoch, long seq, long blocks, long digest) {
      this(replicaId, epoch, seq, blocks, digest, 0);
    }
  }

  /** An origin ingress's reservation watermark and digest in one tracker. */
  public record OriginMark(String origin, long seq, long count, long digest) implements KryoWire {}

  @Override
  public boolean equals(Object o) {
    return o instanceof TrackerView v
        && atMillis == v.atMillis
        && ready == v.ready
        && ingressId.equals(v.ingressId)
        && Arrays.equals(replicas, v.replicas)
        && Arrays.equals(origins, v.origins)
        && Arrays.equals(accuracy, v.accuracy);
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        ingressId,
        atMillis,
        ready,
        Arrays.hashCode(replicas),
        Arrays.hashCode(origins),
        Arrays.hashCode(accuracy));
  }

  @Override
  public String toString() {
    return "TrackerView["
        + ingressId
        + ", replicas="
        + replicas.length
        + ", origins="
        + origins.length
        + "]";
  }
}

package io.kvrouter.protocol;

import java.util.Arrays;
import java.util.Objects;

/**
 * One tracker's watermarks and digests at one moment: per replica the last applied {@code (epoch,
 * seq)} with its block count and digest, per origin ingress the last applied reservation seq with
 * its open-reservation count and digest. Two trackers at equal watermarks must report equal digests
 * ({@code docs/architecture.md}, "Consistency, stated"). Arrays are never mutated after the record
 * is built.
 */
public record TrackerView(
    String ingressId, long atMillis, ReplicaMark[] replicas, OriginMark[] origins, boolean ready)
    implements KryoWire {

  /** A replica's watermark and block digest in one tracker. */
  public record ReplicaMark(String replicaId, long epoch, long seq, long blocks, long digest)
      implements KryoWire {}

  /** An origin ingress's reservation watermark and digest in one tracker. */
  public record OriginMark(String origin, long seq, long count, long digest) implements KryoWire {}

  @Override
  public boolean equals(Object o) {
    return o instanceof TrackerView v
        && atMillis == v.atMillis
        && ready == v.ready
        && ingressId.equals(v.ingressId)
        && Arrays.equals(replicas, v.replicas)
        && Arrays.equals(origins, v.origins);
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        ingressId, atMillis, ready, Arrays.hashCode(replicas), Arrays.hashCode(origins));
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

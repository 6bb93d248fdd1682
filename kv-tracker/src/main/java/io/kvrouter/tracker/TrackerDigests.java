package io.kvrouter.tracker;

import io.kvrouter.tracker.index.ReplicaDigest;
import io.kvrouter.tracker.ledger.ReservationDigest;
import java.util.Map;

/**
 * A tracker's digests at one moment: per replica its watermark and block digest, per origin ingress
 * its reservation digest. Two trackers at equal watermarks must report equal replica digests
 * ({@code docs/architecture.md}, "Consistency, stated").
 */
public record TrackerDigests(
    Map<String, ReplicaState> replicas, Map<String, ReservationDigest> origins) {

  public TrackerDigests {
    replicas = Map.copyOf(replicas);
    origins = Map.copyOf(origins);
  }

  /**
   * @param epoch last applied epoch (-1 if none)
   * @param seq last applied seq (-1 if none)
   * @param digest digest of the blocks held
   */
  public record ReplicaState(long epoch, long seq, ReplicaDigest digest) {}
}

package io.kvrouter.protocol;

import java.util.Arrays;
import java.util.Objects;

/**
 * The missed batches, in seq order (maybe none: the tracker is up to date). The array is never
 * mutated after the record is built.
 */
public record Replayed(String replicaId, long epoch, KvEventBatch[] batches)
    implements ReplayReply {

  @Override
  public boolean equals(Object o) {
    return o instanceof Replayed r
        && epoch == r.epoch
        && replicaId.equals(r.replicaId)
        && Arrays.equals(batches, r.batches);
  }

  @Override
  public int hashCode() {
    return Objects.hash(replicaId, epoch, Arrays.hashCode(batches));
  }

  @Override
  public String toString() {
    return "Replayed[" + replicaId + ", epoch=" + epoch + ", batches=" + batches.length + "]";
  }
}

package io.kvrouter.ingress.traffic;

import java.time.Duration;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;

/** The Distributed Data write consistencies the settings name: all, majority or local. */
final class Consistency {

  private Consistency() {}

  /** {@code all}, {@code majority} or {@code local} (validated by {@link TrafficSettings}). */
  static Replicator.WriteConsistency write(String name, Duration timeout) {
    return switch (name) {
      case "all" -> new Replicator.WriteAll(timeout);
      case "majority" -> new Replicator.WriteMajority(timeout);
      default -> Replicator.writeLocal();
    };
  }
}

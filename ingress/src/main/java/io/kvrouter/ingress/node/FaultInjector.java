package io.kvrouter.ingress.node;

import com.typesafe.config.Config;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Drops, duplicates and reorders a random share of the messages a tracker receives from the cluster
 * topics, to prove that sequencing, replay and snapshots repair any of it (tests and chaos runs;
 * off by default). Reordering holds one message back and delivers it after the next.
 *
 * <p>Cost: one random draw per message. Not thread-safe (one per feeding actor).
 */
final class FaultInjector<T> {

  private final double drop;
  private final double duplicate;
  private final double reorder;
  private final SplittableRandom random;
  private T held;

  FaultInjector(double drop, double duplicate, double reorder, long seed) {
    this.drop = drop;
    this.duplicate = duplicate;
    this.reorder = reorder;
    this.random = new SplittableRandom(seed);
  }

  /** Reads {@code kvrouter.tracker.fault-injection}. */
  static <T> FaultInjector<T> fromConfig(Config config, long salt) {
    Config c = config.getConfig("kvrouter.tracker.fault-injection");
    return new FaultInjector<>(
        c.getDouble("drop"),
        c.getDouble("duplicate"),
        c.getDouble("reorder"),
        c.getLong("seed") ^ salt);
  }

  boolean active() {
    return drop > 0 || duplicate > 0 || reorder > 0;
  }

  /** The messages to deliver now in place of {@code message}, in order. */
  List<T> pass(T message) {
    List<T> out = new ArrayList<>(3);
    double draw = random.nextDouble();
    if (draw < drop) {
      // lost
    } else if (draw < drop + reorder && held == null) {
      held = message;
      return out;
    } else {
      out.add(message);
      if (random.nextDouble() < duplicate) {
        out.add(message);
      }
    }
    if (held != null && !out.isEmpty()) {
      out.add(held);
      held = null;
    }
    return out;
  }
}

package io.kvrouter.systemtest.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The seeded fault schedule of a chaos run, in plain Java: one fault at a time (a SIGKILL of an
 * engine, an agent or an ingress, then a restart after a random downtime), so the cluster keeps a
 * majority and the split brain resolver only ever downs the victim. The first three faults hit one
 * of each kind, in a seeded order, so even a short run covers them all. The same seed gives the
 * same schedule.
 */
final class ChaosSchedule {

  /** What a fault kills. */
  enum Kind {
    ENGINE,
    AGENT,
    INGRESS
  }

  /**
   * One fault.
   *
   * @param kind what is killed
   * @param victim which one of its kind (0-based)
   * @param downtimeMillis how long it stays dead before it is started again
   * @param gapMillis the quiet time after it is back before the next fault
   */
  record Fault(Kind kind, int victim, long downtimeMillis, long gapMillis) {}

  private ChaosSchedule() {}

  /**
   * {@code count} faults over {@code engines} engines, {@code agents} agents and {@code ingresses}
   * ingresses; downtimes in [0.5 s, 5 s), gaps in [1 s, 4 s).
   */
  static List<Fault> of(long seed, int count, int engines, int agents, int ingresses) {
    SplittableRandom random = new SplittableRandom(seed);
    List<Kind> firsts = new ArrayList<>(List.of(Kind.values()));
    List<Fault> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      Kind kind =
          firsts.isEmpty()
              ? Kind.values()[random.nextInt(Kind.values().length)]
              : firsts.remove(random.nextInt(firsts.size()));
      int of =
          switch (kind) {
            case ENGINE -> engines;
            case AGENT -> agents;
            case INGRESS -> ingresses;
          };
      out.add(
          new Fault(
              kind,
              random.nextInt(of),
              random.nextLong(500, 5_000),
              random.nextLong(1_000, 4_000)));
    }
    return List.copyOf(out);
  }
}

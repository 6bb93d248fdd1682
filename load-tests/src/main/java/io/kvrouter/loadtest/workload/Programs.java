package io.kvrouter.loadtest.workload;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The programs (agent sessions, trajectories) of a {@link Workload}: per request, the program it
 * belongs to, the requests whose replies it waits for, how long after the last of them it is sent,
 * and whether its own reply ends in a tool call (the program will be back). A request is named by
 * its session and turn ({@link #key}), so the table survives the renumbering {@link Workload#of}
 * and its withers do.
 *
 * <p>A step with no predecessors is sent at its recorded arrival (open loop, as a trace records
 * it); one with predecessors is sent {@code gapMicros} after the last of their replies finishes
 * (closed loop: a tool runs between a reply and the next turn, so an agent's next turn waits for
 * the previous one). A sub-agent's turns belong to their parent's program.
 *
 * <p>Immutable; O(1) per lookup.
 */
public final class Programs {

  /**
   * One request's place in its program.
   *
   * @param program the program's id (a sub-agent's requests carry their parent's)
   * @param after keys ({@link #key}) of the requests whose replies this one waits for; empty: sent
   *     at its recorded arrival
   * @param gapMicros time from the last of those replies to this request (the tool run)
   * @param endsInToolCall whether this request's reply ends in a tool call (another turn of the
   *     same session follows, extending this prompt and its reply)
   */
  public record Step(String program, List<String> after, long gapMicros, boolean endsInToolCall) {
    public Step {
      Objects.requireNonNull(program, "program");
      after = List.copyOf(after);
      if (gapMicros < 0) {
        throw new IllegalArgumentException("gap must be >= 0, got " + gapMicros);
      }
    }
  }

  private final Map<String, Step> steps;

  /**
   * @param steps by request key ({@link #key})
   * @throws IllegalArgumentException when a step waits for a request the table does not hold
   */
  public Programs(Map<String, Step> steps) {
    this.steps = Map.copyOf(steps);
    for (Map.Entry<String, Step> e : this.steps.entrySet()) {
      for (String before : e.getValue().after()) {
        if (!this.steps.containsKey(before)) {
          throw new IllegalArgumentException(
              "step " + e.getKey() + " waits for " + before + ", which no step names");
        }
      }
    }
  }

  /** The key of a request: its session and turn. */
  public static String key(String session, int turn) {
    return session + '#' + turn;
  }

  /**
   * The key of {@code r}: its session and turn, or for a request of no session its index (such a
   * key holds for the workload it was taken from, not for one renumbered from it).
   */
  public static String key(WorkloadRequest r) {
    return r.session().isEmpty() ? "@" + r.index() : key(r.session(), r.turn());
  }

  /** The step of {@code r}, or null when the table does not hold it. */
  public Step of(WorkloadRequest r) {
    return steps.get(key(r));
  }

  /** Number of steps. */
  public int size() {
    return steps.size();
  }

  /**
   * The programs of {@code workload} read from its sessions: every request of a non-empty session
   * belongs to the program of that name, sent at its recorded arrival; a request whose session is
   * empty is a program of its own. Nothing is known of tool calls (none is assumed).
   */
  public static Programs fromSessions(Workload workload) {
    Map<String, Step> out = new HashMap<>();
    for (WorkloadRequest r : workload.requests()) {
      String program = r.session().isEmpty() ? "request-" + r.index() : r.session();
      out.put(key(r), new Step(program, List.of(), 0, false));
    }
    return new Programs(out);
  }
}

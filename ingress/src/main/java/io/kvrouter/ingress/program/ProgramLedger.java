package io.kvrouter.ingress.program;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * What this ingress knows of each program (an agent's session): the service it attained (tokens the
 * engines computed for it: uncached prompt tokens plus generated ones, per turn), how many turns it
 * had, and whether its last reply ended in a tool call (then the program will be back, and its next
 * turn is a continuing one).
 *
 * <p>The {@link #rank} of a program orders the router queue within a priority and tenant:
 * program-level least attained service (Autellix, Luo et al., "Autellix: An Efficient Serving
 * Engine for LLM Agents as General Programs", arXiv 2502.13965, section 4: PLAS ranks each call by
 * the cumulative service of its program, so short programs are not stuck behind long ones). A
 * program with no turn yet ranks as one that attained {@code newProgramTokens}: a program in
 * mid-session goes ahead of a new one (its prefix is cached on its replica and its client is
 * waiting inside a session), until it has been served that much, past which new programs go first
 * (the least-attained-service order that keeps one long program from holding every turn).
 *
 * <p>With {@code oldestFirst} the order is the programs' age instead: a program ranks at the time
 * this ledger first saw it answered, so the program that started first goes first and a new one
 * (ranked at the present) goes behind every program in mid-session. Under overload this shortens
 * the longest programs' completion, which least-attained-service order puts last
 * (docs/benchmarks.md, "Agents in the lab").
 *
 * <p>Per ingress: a program whose turns reach several ingresses is known at each by the turns it
 * sent there. Thread-safe; O(1) per operation, except that crossing {@code maxPrograms} forgets the
 * idle programs and then the least recently seen ones (O(n log n), once per tenth of the bound).
 * About 100 bytes per program.
 */
public final class ProgramLedger {

  /** What the ledger says of a program's turn as it arrives. */
  public record Turn(boolean continuing, boolean warmed) {
    static final Turn NEW = new Turn(false, false);
  }

  private static final class State {
    long firstMillis;
    long attained;
    int turns;
    long touchedMillis;
    boolean awaitingTool;
    boolean warmed;
  }

  private final ConcurrentHashMap<String, State> programs = new ConcurrentHashMap<>();
  private final long newProgramTokens;
  private final int maxPrograms;
  private final long idleMillis;
  private final LongSupplier clock;
  private final boolean oldestFirst;

  /**
   * @param newProgramTokens the attained service a new program ranks at
   * @param maxPrograms programs remembered at once
   * @param idleMillis a program unseen for this long is forgotten when room is needed
   * @param clock milliseconds
   */
  public ProgramLedger(
      long newProgramTokens, int maxPrograms, long idleMillis, LongSupplier clock) {
    this(newProgramTokens, maxPrograms, idleMillis, clock, false);
  }

  /** As above, ranking programs by age ({@code oldestFirst}) or by attained service. */
  public ProgramLedger(
      long newProgramTokens,
      int maxPrograms,
      long idleMillis,
      LongSupplier clock,
      boolean oldestFirst) {
    this.newProgramTokens = newProgramTokens;
    this.maxPrograms = maxPrograms;
    this.idleMillis = idleMillis;
    this.clock = clock;
    this.oldestFirst = oldestFirst;
  }

  /**
   * The queue rank of a turn of {@code program} (lower goes first): its attained service once it
   * had a turn, {@code newProgramTokens} before (and for a request without a program); with {@code
   * oldestFirst}, when it was first answered, or the present before.
   */
  public double rank(String program) {
    State s = program == null ? null : programs.get(program);
    if (oldestFirst) {
      if (s == null) {
        return clock.getAsLong();
      }
      synchronized (s) {
        return s.firstMillis;
      }
    }
    if (s == null) {
      return newProgramTokens;
    }
    synchronized (s) {
      return s.turns == 0 ? newProgramTokens : s.attained;
    }
  }

  /**
   * A turn of {@code program} arrived: whether it continues after a reply that ended in a tool
   * call, and whether that reply's next turn was warmed since.
   */
  public Turn arrived(String program) {
    State s = programs.get(program);
    if (s == null) {
      return Turn.NEW;
    }
    synchronized (s) {
      s.touchedMillis = clock.getAsLong();
      return new Turn(s.awaitingTool, s.awaitingTool && s.warmed);
    }
  }

  /**
   * A turn of {@code program} was answered: it attained {@code service} more tokens, and its reply
   * ended in a tool call ({@code toolCall}) or not.
   */
  public void replied(String program, long service, boolean toolCall) {
    State s =
        programs.computeIfAbsent(
            program,
            p -> {
              State fresh = new State();
              fresh.firstMillis = clock.getAsLong();
              return fresh;
            });
    synchronized (s) {
      s.attained += Math.max(0, service);
      s.turns++;
      s.awaitingTool = toolCall;
      s.warmed = false;
      s.touchedMillis = clock.getAsLong();
    }
    if (programs.size() > maxPrograms) {
      forget();
    }
  }

  /** The next turn of {@code program} was warmed on its replica. */
  public void warmed(String program) {
    State s = programs.get(program);
    if (s != null) {
      synchronized (s) {
        s.warmed = true;
      }
    }
  }

  /** Programs remembered. */
  public int size() {
    return programs.size();
  }

  /** Forgets the idle programs, then the least recently seen down to nine tenths of the bound. */
  private synchronized void forget() {
    if (programs.size() <= maxPrograms) {
      return;
    }
    long now = clock.getAsLong();
    programs.entrySet().removeIf(e -> now - e.getValue().touchedMillis > idleMillis);
    int keep = maxPrograms - maxPrograms / 10;
    if (programs.size() <= keep) {
      return;
    }
    List<Map.Entry<String, State>> byAge = new ArrayList<>(programs.entrySet());
    byAge.sort(Comparator.comparingLong(e -> e.getValue().touchedMillis));
    for (int i = 0; i < byAge.size() - keep; i++) {
      programs.remove(byAge.get(i).getKey());
    }
  }
}

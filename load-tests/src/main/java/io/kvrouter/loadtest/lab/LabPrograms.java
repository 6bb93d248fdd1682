package io.kvrouter.loadtest.lab;

import io.kvrouter.loadtest.workload.Programs;
import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.WorkloadRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The programs of a {@link LabSimulation} run (a workload with {@link Programs}): when each request
 * is sent, what the program features do, and what a program's turns measure.
 *
 * <ul>
 *   <li><b>Closed loop</b> (every policy): a request that waits for replies is sent its gap after
 *       the last of them finished ({@link #finished} returns it); the others at their recorded
 *       arrival.
 *   <li><b>Warming</b> ({@code +warm}): when a reply that ends in a tool call finishes, the next
 *       turn's prefix (this prompt and its reply, as the next prompt holds them: the first {@code
 *       (prompt + output) / blockSize} of its blocks) goes to the replica that answered, as an
 *       ordinary request there ({@link LabEngine#submitWarm}), if that replica is idle: no request,
 *       real or warm-up, running or waiting on it ({@link LabEngine#idle}), the ingress's {@code
 *       warm.max-others-in-flight = 0}, and if at most {@link #WARM_MAX_UNCACHED_TOKENS} of it are
 *       uncached there (the ingress's {@code warm.max-uncached-tokens}; the lab reads the engine's
 *       cache where the ingress reads its tracker's prediction); it is aborted when a request that
 *       follows that reply arrives ({@link #arrived}).
 *   <li><b>Program order</b> ({@code +las}): a program's request queues at the engine ahead of
 *       every new program's and, among continuing programs, by the program's attained service, the
 *       summed time its earlier requests took from arrival to last token (Autellix's program-level
 *       least-attained-service, PLAS: Luo et al., arXiv 2502.13965, section 4; where Autellix
 *       starts a new program in its highest-priority queue, here it comes after those in
 *       mid-session, as issue 55 asks: a program in mid-session keeps its replica ahead of a new
 *       one). No anti-starvation: a new program waits while continuing ones queue. {@code +oldest}
 *       orders by the program's start instead (its first request's arrival; a sub-agent's requests
 *       rank with their parent's): the program that started first goes first, a new one last (the
 *       ingress's {@code admission.order = oldest}).
 * </ul>
 *
 * <p>Measures: per request its TTFT, and for a continuing turn (every request of a program but its
 * first) the prompt tokens the engine did not hold at its first admission; per program (a
 * sub-agent's requests count to their parent's) the time from its first arrival to its last token.
 *
 * <p>Cost: O(requests) memory, O(successors) per finish. Single-threaded, one per run.
 */
final class LabPrograms {

  private final Workload workload;
  private final PromptKeys keys;
  private final LabProgramFeatures features;
  private final int blockSize;

  /** Per request: its program's number, its step, its successors, replies it still waits for. */
  private final int[] program;

  private final Programs.Step[] steps;
  private final int[][] successors;
  private final int[] pending;

  /** Per request: whether it opens its program; per program: attained service, first, last. */
  private final boolean[] opener;

  private final double[] attainedMillis;
  private final long[] programFirst;
  private final long[] programLast;
  private final boolean[] topLevel;

  /** Request indexes by {@link Programs#key}. */
  private final Map<String, Integer> byKey = new HashMap<>();

  /** The ingress's default {@code warm.max-uncached-tokens}. */
  static final int WARM_MAX_UNCACHED_TOKENS = 2_048;

  /** The warm-up running for request i's next turn, by the index of request i. */
  private final Map<Integer, LabSequence> warms = new HashMap<>();

  private final double[] ttftMillis;
  private final double[] missing;

  /** Per request, the replica that answered it (-1: not yet). */
  private final int[] replica;

  /** Per program, its own turns' summed TTFT, time after the first token and tool runs (µs). */
  private final double[] ownFirstToken;

  private final double[] ownDecode;
  private final double[] ownTool;

  LabPrograms(Workload workload, PromptKeys keys, LabProgramFeatures features, int blockSize) {
    this.workload = workload;
    this.keys = keys;
    this.features = features;
    this.blockSize = blockSize;
    int n = workload.size();
    Programs programs = workload.programs();
    for (WorkloadRequest r : workload.requests()) {
      byKey.put(Programs.key(r), r.index());
    }
    Map<String, Integer> programIds = new HashMap<>();
    this.program = new int[n];
    this.steps = new Programs.Step[n];
    this.pending = new int[n];
    this.opener = new boolean[n];
    List<List<Integer>> next = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      next.add(new ArrayList<>());
    }
    List<Boolean> top = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      WorkloadRequest r = workload.get(i);
      Programs.Step step = programs.of(r);
      if (step == null) {
        step = new Programs.Step("request-" + i, List.of(), 0, false);
      }
      steps[i] = step;
      Integer id = programIds.get(step.program());
      if (id == null) {
        id = programIds.size();
        programIds.put(step.program(), id);
        opener[i] = true;
        top.add(r.session().equals(step.program()) || r.session().isEmpty());
      }
      program[i] = id;
      for (String before : step.after()) {
        Integer b = byKey.get(before);
        if (b != null) {
          next.get(b).add(i);
          pending[i]++;
        }
      }
    }
    this.successors = new int[n][];
    for (int i = 0; i < n; i++) {
      successors[i] = next.get(i).stream().mapToInt(Integer::intValue).toArray();
    }
    int programsCount = programIds.size();
    this.attainedMillis = new double[programsCount];
    this.programFirst = new long[programsCount];
    this.programLast = new long[programsCount];
    this.topLevel = new boolean[programsCount];
    Arrays.fill(programFirst, Long.MAX_VALUE);
    for (int p = 0; p < programsCount; p++) {
      topLevel[p] = top.get(p);
    }
    this.ttftMillis = new double[n];
    this.missing = new double[n];
    Arrays.fill(ttftMillis, -1);
    Arrays.fill(missing, -1);
    this.replica = new int[n];
    Arrays.fill(replica, -1);
    this.ownFirstToken = new double[programsCount];
    this.ownDecode = new double[programsCount];
    this.ownTool = new double[programsCount];
  }

  /** Whether request {@code i} is sent at its recorded arrival (it waits for no reply). */
  boolean openLoop(int i) {
    return pending[i] == 0;
  }

  /**
   * Request {@code i} reached its router at {@code now}: a warm-up for it is not needed any more.
   */
  void arrived(int i, long now) {
    int p = program[i];
    programFirst[p] = Math.min(programFirst[p], now);
    Programs.Step step = steps[i];
    for (String before : step.after()) {
      LabSequence warm = warms.remove(indexOf(before));
      if (warm != null) {
        warm.cancelled = true;
      }
    }
  }

  private int indexOf(String key) {
    Integer i = byKey.get(key);
    return i == null ? -1 : i;
  }

  /** The waiting-queue priority of request {@code i} ({@link LabEngine#submit}; 0: FCFS). */
  long priority(int i) {
    if (features.oldest()) {
      return 1 + programFirst[program[i]] / 1000;
    }
    if (!features.las()) {
      return 0;
    }
    if (opener[i]) {
      return Long.MAX_VALUE;
    }
    return 1 + (long) attainedMillis[program[i]];
  }

  /** Request {@code i}'s first token: {@code seq} tells what the engine held of its prompt. */
  void firstToken(int i, LabSequence seq, long arrivalMicros, long timeMicros) {
    if (ttftMillis[i] < 0) {
      ttftMillis[i] = (timeMicros - arrivalMicros) / 1000.0;
      missing[i] = Math.max(0, seq.promptLength - seq.cachedPromptTokens);
    }
  }

  /**
   * Request {@code i} finished at {@code now} on {@code engine}: its program's service grows, a
   * warm-up of its next turn goes to {@code engine} (with {@code +warm}), and the requests that
   * waited for it alone are returned as {@code {index, arrival}} pairs to send.
   */
  List<long[]> finished(int i, LabEngine engine, long arrivalMicros, long now) {
    int p = program[i];
    replica[i] = engine == null ? -1 : engine.replica();
    attainedMillis[p] += (now - arrivalMicros) / 1000.0;
    programLast[p] = Math.max(programLast[p], now);
    if (workload.get(i).session().equals(steps[i].program()) && ttftMillis[i] >= 0) {
      ownFirstToken[p] += ttftMillis[i] * 1000;
      ownDecode[p] += (now - arrivalMicros) - ttftMillis[i] * 1000;
      ownTool[p] += pendingAtStart(i) ? steps[i].gapMicros() : 0;
    }
    if (features.warm() && steps[i].endsInToolCall() && successors[i].length > 0) {
      warm(i, engine);
    }
    List<long[]> send = new ArrayList<>(successors[i].length);
    for (int j : successors[i]) {
      if (--pending[j] == 0) {
        send.add(new long[] {j, now + steps[j].gapMicros()});
      }
    }
    return send;
  }

  /** Whether request {@code i} waited for replies (so was sent its gap after them). */
  private boolean pendingAtStart(int i) {
    return !steps[i].after().isEmpty() && !opener[i];
  }

  /** Where the time of the top-level programs with completion at least {@code fromMillis} went. */
  private ProgramResult.SessionTime sessionTime(double fromMillis) {
    int n = 0;
    double total = 0;
    double first = 0;
    double decode = 0;
    double tool = 0;
    for (int p = 0; p < programFirst.length; p++) {
      if (!topLevel[p] || programLast[p] <= 0 || programFirst[p] == Long.MAX_VALUE) {
        continue;
      }
      double t = (programLast[p] - programFirst[p]) / 1000.0;
      if (t < fromMillis) {
        continue;
      }
      n++;
      total += t / 1000;
      first += ownFirstToken[p] / 1e6;
      decode += ownDecode[p] / 1e6;
      tool += ownTool[p] / 1e6;
    }
    if (n == 0) {
      return ProgramResult.SessionTime.NONE;
    }
    return new ProgramResult.SessionTime(
        n, total / n, first / n, decode / n, tool / n, (total - first - decode - tool) / n);
  }

  /**
   * A warm-up of the prefix request {@code i}'s successors share, its prompt and its reply, on
   * {@code engine} if it is idle and the warm-up short there.
   */
  private void warm(int i, LabEngine engine) {
    if (engine == null || !engine.idle()) {
      return;
    }
    WorkloadRequest r = workload.get(i);
    int j = successors[i][0];
    long[] next = keys.of(j);
    int blocks = Math.min(next.length, (r.inputLength() + r.outputLength()) / blockSize);
    if (blocks < 2) {
      return;
    }
    LabSequence w =
        new LabSequence(j, "warm-" + j, -1, Arrays.copyOf(next, blocks), blocks * blockSize, 1, 0);
    w.adapter = keys.adapter(j);
    w.free = features.warmFree();
    if (engine.uncachedTokens(w) > WARM_MAX_UNCACHED_TOKENS) {
      return;
    }
    engine.submitWarm(w);
    warms.put(i, w);
  }

  /** What the programs measured. */
  ProgramResult result(LabEngine[] engines) {
    List<Double> continuing = new ArrayList<>();
    List<Double> missingTokens = new ArrayList<>();
    for (int i = 0; i < ttftMillis.length; i++) {
      if (!opener[i] && ttftMillis[i] >= 0) {
        continuing.add(ttftMillis[i]);
        missingTokens.add(missing[i]);
      }
    }
    List<Double> sessions = new ArrayList<>();
    for (int p = 0; p < programFirst.length; p++) {
      if (topLevel[p] && programLast[p] > 0 && programFirst[p] != Long.MAX_VALUE) {
        sessions.add((programLast[p] - programFirst[p]) / 1000.0);
      }
    }
    long warmed = 0;
    long dropped = 0;
    for (LabEngine e : engines) {
      warmed += e.warmedTokens();
      dropped += e.warmsDropped();
    }
    Latency completion = Latency.of(toArray(sessions));
    return new ProgramResult(
        Latency.of(toArray(continuing)),
        completion,
        Latency.of(toArray(missingTokens)),
        sessions.size(),
        warmed,
        dropped,
        fanOuts(),
        sessionTime(0),
        sessionTime(completion.p90()),
        ttftMillis.clone(),
        workload.requests().stream().map(Programs::key).toArray(String[]::new));
  }

  /**
   * Where the fan-outs landed: each request whose reply two or more requests of other sessions
   * follow (its sub-agents' first requests), against the replica that answered it, and the parent's
   * next turn (the one request of its own session that waits for those sub-agents).
   */
  ProgramResult.FanOuts fanOuts() {
    int count = 0;
    int subs = 0;
    int onParent = 0;
    double replicas = 0;
    double subMissing = 0;
    int joins = 0;
    int joinOnParent = 0;
    double joinMissing = 0;
    for (int i = 0; i < successors.length; i++) {
      String session = workload.get(i).session();
      int[] children =
          Arrays.stream(successors[i])
              .filter(j -> !workload.get(j).session().equals(session))
              .toArray();
      if (children.length < 2 || replica[i] < 0) {
        continue;
      }
      count++;
      java.util.Set<Integer> used = new java.util.HashSet<>();
      for (int j : children) {
        subs++;
        used.add(replica[j]);
        onParent += replica[j] == replica[i] ? 1 : 0;
        subMissing += Math.max(0, missing[j]);
      }
      replicas += used.size();
      int join = joinOf(children[0], session);
      if (join >= 0) {
        joins++;
        joinOnParent += replica[join] == replica[i] ? 1 : 0;
        joinMissing += Math.max(0, missing[join]);
      }
    }
    if (count == 0) {
      return ProgramResult.FanOuts.NONE;
    }
    return new ProgramResult.FanOuts(
        count,
        subs,
        replicas / count,
        (double) onParent / subs,
        subMissing / subs,
        joins == 0 ? 0 : (double) joinOnParent / joins,
        joins == 0 ? 0 : joinMissing / joins);
  }

  /** The request of {@code session} that waits, through its turns, for sub-agent {@code first}. */
  private int joinOf(int first, String session) {
    int at = first;
    for (int hops = 0; hops < successors.length; hops++) {
      int next = -1;
      for (int j : successors[at]) {
        if (workload.get(j).session().equals(session)) {
          return j;
        }
        next = j;
      }
      if (next < 0) {
        return -1;
      }
      at = next;
    }
    return -1;
  }

  private static double[] toArray(List<Double> values) {
    return values.stream().mapToDouble(Double::doubleValue).toArray();
  }
}

package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.loadtest.workload.Programs;
import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.WorkloadRequest;
import io.kvrouter.loadtest.workload.Workloads;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The program features of the lab (issue 55): warming a program's next turn, program order in an
 * engine's queue, the closed loop of an agent's turns, and what a run of them measures.
 */
class LabProgramsTest {

  /** An engine of {@code blocks} blocks recording first tokens and cached prompt tokens. */
  private static final class Driven {
    final Map<String, Long> firstToken = new HashMap<>();
    final Map<String, Integer> cached = new HashMap<>();
    final List<String> order = new ArrayList<>();
    final LabEngine engine;
    long now;

    Driven(long blocks, int maxNumSeqs) {
      engine =
          new LabEngine(
              0,
              "r0",
              16,
              blocks,
              maxNumSeqs,
              8192,
              0,
              0,
              new LabEngine.Listener() {
                @Override
                public void firstToken(LabEngine e, LabSequence s, long t) {
                  firstToken.put(s.requestId, t);
                  cached.put(s.requestId, s.cachedPromptTokens);
                  order.add(s.requestId);
                }

                @Override
                public void finished(LabEngine e, LabSequence s, long t) {}
              });
    }

    /** Runs passes until idle or until {@code until} (a pass ending after it still completes). */
    void run(long until) {
      while (engine.hasWork() && now < until) {
        long end = engine.startPass(now);
        if (end < 0) {
          return;
        }
        now = engine.passEnd();
        engine.completePass();
      }
    }
  }

  private static long[] keys(long from, int n) {
    long[] out = new long[n];
    for (int i = 0; i < n; i++) {
      out[i] = from + i;
    }
    return out;
  }

  private static LabSequence request(String id, long[] keys, int tokens, int output, long at) {
    return new LabSequence(0, id, 0, keys, tokens, output, at);
  }

  private static LabSequence warm(long[] keys) {
    return new LabSequence(0, "warm", -1, keys, keys.length * 16, 1, 0);
  }

  @Test
  void aWarmUp_leavesTheNextTurnsPrefixCached_andIsNoPrefixQuery() {
    for (boolean warming : new boolean[] {false, true}) {
      Driven d = new Driven(10_000, 256);
      if (warming) {
        d.engine.submitWarm(warm(keys(1, 400)));
      }
      d.run(Long.MAX_VALUE);
      d.engine.submit(request("turn", keys(1, 420), 420 * 16, 4, d.now));
      d.run(Long.MAX_VALUE);
      assertThat(d.order).containsExactly("turn"); // a warm-up reports no first token
      assertThat(d.engine.prefixQueries()).isEqualTo(420 * 16);
      if (warming) {
        assertThat(d.cached.get("turn")).isEqualTo(400 * 16);
        assertThat(d.engine.warmedTokens()).isEqualTo(400 * 16);
      } else {
        assertThat(d.cached.get("turn")).isZero();
      }
    }
  }

  /**
   * vLLM v1 schedules running requests first, a chunked prefill taking what is left of the token
   * budget ({@code Scheduler.schedule}, {@code vllm/v1/core/sched/scheduler.py}, commit 00024d31):
   * a warm-up running when a request arrives is served as a request, never behind it. Its pass of
   * 8,192 tokens ends first, then the rest of its prompt (1,808 tokens) goes ahead of the request's
   * prompt in the next pass; a decode pass beside a running warm-up carries the warm-up's chunk.
   */
  @Test
  void aRequestArrivingDuringAWarmUp_waitsForItsChunksAsForAnyRequest() {
    long[] firstTokens = new long[3];
    for (int run = 0; run < 3; run++) {
      Driven d = new Driven(100_000, 256);
      if (run > 0) {
        LabSequence first =
            run == 1
                ? warm(keys(1_000_000, 625))
                : new LabSequence(0, "other", 0, keys(1_000_000, 625), 625 * 16, 1, 0);
        if (run == 1) {
          d.engine.submitWarm(first);
        } else {
          d.engine.submit(first);
        }
        d.engine.startPass(0); // its first chunk under way
      }
      long arrival = 1;
      d.engine.submit(request("real", keys(1, 100), 100 * 16, 2, arrival));
      if (run > 0) {
        d.now = d.engine.passEnd();
        d.engine.completePass();
      } else {
        d.now = arrival;
      }
      d.run(Long.MAX_VALUE);
      firstTokens[run] = d.firstToken.get("real") - arrival;
    }
    assertThat(firstTokens[1])
        .as("the warm-up's chunks delay the request")
        .isGreaterThan(firstTokens[0])
        .as("as much as an ordinary request of the same prompt: no free time for warm-ups")
        .isEqualTo(firstTokens[2]);
  }

  @Test
  void theWarmFreeControl_isWarmWhoseWarmUpsTakeNoEngineTime() {
    assertThat(LabProgramFeatures.of("kvrouter+warmfree").warm()).isTrue();
    long[] ends = new long[2];
    for (int run = 0; run < 2; run++) {
      Driven d = new Driven(100_000, 256);
      LabSequence w = warm(keys(1, 100));
      w.free = run == 1;
      d.engine.submitWarm(w);
      d.engine.submit(request("real", keys(1_000, 100), 100 * 16, 2, 0));
      d.run(Long.MAX_VALUE);
      ends[run] = d.firstToken.get("real");
    }
    assertThat(ends[1]).isLessThan(ends[0]);
  }

  @Test
  void anAbortedWarmUp_leavesAtThePassEnd_itsComputedBlocksCached() {
    Driven d = new Driven(100_000, 256);
    LabSequence w = warm(keys(1, 2_000));
    d.engine.submitWarm(w);
    d.run(1); // one pass of it: the whole token budget
    w.cancelled = true;
    d.run(Long.MAX_VALUE);
    assertThat(d.engine.warmedTokens()).isEqualTo(8_192);
    assertThat(d.engine.warmsDropped()).isEqualTo(1);
    assertThat(d.engine.hasWork()).isFalse();
    d.engine.submit(request("turn", keys(1, 2_000), 2_000 * 16, 2, d.now));
    d.run(Long.MAX_VALUE);
    assertThat(d.cached.get("turn")).isEqualTo(8_192);
  }

  @Test
  void programOrder_admitsTheLeastAttainedContinuingProgramFirst_andNewProgramsLast() {
    Driven d = new Driven(10_000, 1); // one request at a time: admission order is the order
    d.engine.submit(request("busy", keys(1, 10), 160, 50, 0));
    d.run(1);
    String[] ids = {"new", "served-40", "served-7", "served-40-later"};
    long[] priorities = {Long.MAX_VALUE, 41, 8, 41};
    for (int i = 0; i < ids.length; i++) {
      LabSequence s = request(ids[i], keys(100L * (i + 1), 10), 160, 2, d.now);
      s.priority = priorities[i];
      d.engine.submit(s);
    }
    d.run(Long.MAX_VALUE);
    assertThat(d.order).containsExactly("busy", "served-7", "served-40", "served-40-later", "new");
  }

  @Test
  void ageOrder_ranksATurnByItsProgramsStart_olderFirst_howeverMuchItWasServed() {
    Workload w = agents();
    LabPrograms programs =
        new LabPrograms(
            w,
            PolicyLab.keys(w, LabConfig.defaults(1)),
            LabProgramFeatures.of("kvrouter+oldest"),
            16);
    String a = w.programs().of(w.get(0)).program();
    int b0 = -1;
    int a1 = -1;
    for (WorkloadRequest r : w.requests()) {
      String p = w.programs().of(r).program();
      if (b0 < 0 && !p.equals(a)) {
        b0 = r.index();
      }
      if (a1 < 0 && r.index() > 0 && p.equals(a)) {
        a1 = r.index();
      }
    }
    programs.arrived(0, 1_000_000);
    programs.finished(0, null, 1_000_000, 900_000_000); // program a attained 899 s
    programs.arrived(b0, 2_000_000);
    programs.arrived(a1, 900_000_000);

    assertThat(programs.priority(a1)).isLessThan(programs.priority(b0)).isPositive();
  }

  private static Workload agents() {
    return Workloads.byName(
        "agents",
        Map.of("programs", "6", "medianTurns", "12", "fanOut", "0.3", "medianToolSeconds", "1"),
        3);
  }

  /**
   * The ingress's {@code warm.max-others-in-flight = 0} and {@code warm.max-uncached-tokens}: a
   * reply ending in a tool call warms its next turn only on an idle engine that holds all but at
   * most 2,048 tokens of the prefix; beside a running request, or with the prefix uncached, the
   * warm-up is not sent.
   */
  @Test
  void aWarmUpGoesOnlyToAnIdleEngine_thatHoldsMostOfItsPrefix() {
    Workload w = agents();
    PromptKeys keys = PolicyLab.keys(w, LabConfig.defaults(1));
    Map<String, Integer> index = new HashMap<>();
    w.stream().forEach(r -> index.put(Programs.key(r), r.index()));
    int toolCall = -1;
    int next = -1;
    for (WorkloadRequest r : w.requests()) {
      List<String> after = w.programs().of(r).after();
      if (after.size() == 1) {
        WorkloadRequest before = w.get(index.get(after.get(0)));
        if (w.programs().of(before).endsInToolCall()
            && before.inputLength() + before.outputLength() >= 4 * 2_048) {
          toolCall = before.index();
          next = r.index();
          break;
        }
      }
    }
    assertThat(toolCall).isNotNegative();
    WorkloadRequest before = w.get(toolCall);
    long[] prefix =
        java.util.Arrays.copyOf(
            keys.of(next), (before.inputLength() + before.outputLength()) / 16 - 64);
    LabProgramFeatures warm = new LabProgramFeatures(true, false, false, false, 0, false, -1);
    for (String c : List.of("idle", "busy", "uncached")) {
      LabPrograms programs = new LabPrograms(w, keys, warm, 16);
      Driven d = new Driven(1_000_000, 256);
      if (!c.equals("uncached")) { // all of the prefix but its last 64 blocks cached
        d.engine.submit(request("earlier", prefix, prefix.length * 16, 1, 0));
        d.run(Long.MAX_VALUE);
      }
      if (c.equals("busy")) {
        d.engine.submit(request("decoding", keys(5_000_000, 10), 160, 100, d.now));
        d.run(d.now + 1);
      }
      int waitingBefore = d.engine.waitingCount();
      programs.finished(toolCall, d.engine, 0, d.now);
      assertThat(d.engine.waitingCount() - waitingBefore).as(c).isEqualTo(c.equals("idle") ? 1 : 0);
    }
  }

  @Test
  void aTurnWaitsForEveryReplyItFollows_thenItsToolRun() {
    Workload w = agents();
    LabPrograms programs =
        new LabPrograms(w, PolicyLab.keys(w, LabConfig.defaults(1)), LabProgramFeatures.NONE, 16);
    WorkloadRequest join = null;
    for (WorkloadRequest r : w.requests()) {
      if (w.programs().of(r).after().size() > 1) {
        join = r;
        break;
      }
    }
    assertThat(join).isNotNull();
    int j = join.index();
    assertThat(programs.openLoop(j)).isFalse();
    List<String> before = w.programs().of(join).after();
    Map<String, Integer> index = new HashMap<>();
    w.stream().forEach(r -> index.put(Programs.key(r), r.index()));
    long now = 5_000_000;
    for (int k = 0; k < before.size(); k++) {
      long at = now + k;
      List<long[]> send = programs.finished(index.get(before.get(k)), null, 0, at);
      if (k < before.size() - 1) {
        assertThat(send).noneMatch(s -> s[0] == j);
      } else {
        assertThat(send).anySatisfy(s -> assertThat(s).containsExactly(j, at)); // gap 0: a join
      }
    }
    assertThat(programs.openLoop(0)).isTrue(); // the first request of a program is sent at once
  }

  @Test
  void anAgentRun_warmsTheNextTurns_andTheyMissFewerTokens() {
    Workload w = agents();
    LabConfig config =
        LabConfig.defaults(2)
            .withCapacity(40_000)
            .withPolicies(List.of("kvrouter", "kvrouter+warm+las"));
    LabResults results = PolicyLab.run(w, config, 1, "test");
    ProgramResult without = results.policies().get(0).programs();
    ProgramResult with = results.policies().get(1).programs();
    assertThat(results.policies()).allMatch(p -> p.completed() == w.size());
    assertThat(without.sessions()).isEqualTo(6);
    assertThat(without.warmedTokens()).isZero();
    assertThat(with.warmedTokens()).isPositive();
    assertThat(with.missingTokens().mean()).isLessThan(without.missingTokens().mean());
  }
}

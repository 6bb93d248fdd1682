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
  void aWarmUp_leavesTheNextTurnsPrefixCached() {
    for (boolean warming : new boolean[] {false, true}) {
      Driven d = new Driven(10_000, 256);
      if (warming) {
        d.engine.submitWarm(warm(keys(1, 400))); // 6,400 tokens: four passes of 2,048 at most
      }
      d.run(Long.MAX_VALUE);
      d.engine.submit(request("turn", keys(1, 420), 420 * 16, 4, d.now));
      d.run(Long.MAX_VALUE);
      if (warming) {
        assertThat(d.cached.get("turn")).isEqualTo(400 * 16);
        assertThat(d.engine.warmedTokens()).isEqualTo(400 * 16);
      } else {
        assertThat(d.cached.get("turn")).isZero();
      }
    }
  }

  @Test
  void aRealRequest_takesItsPassWhole_andTheRoomAWarmUpHeld() {
    // Without and with a long warm-up under way when the request comes: its first token is no
    // later than one warm chunk's pass, and a request that needs the warm-up's blocks gets them.
    long[] firstTokens = new long[2];
    for (int run = 0; run < 2; run++) {
      Driven d = new Driven(1_000, 256);
      if (run == 1) {
        d.engine.submitWarm(warm(keys(1_000_000, 900))); // 90 % of the blocks, past the headroom
        d.engine.submitWarm(warm(keys(2_000_000, 700))); // within it
      }
      while (run == 1 && d.engine.warmedTokens() < 500 * 16) {
        d.engine.startPass(d.now); // the second warm-up holds 512 blocks; the first was refused
        d.now = d.engine.passEnd();
        d.engine.completePass();
      }
      long arrival = d.now;
      d.engine.submit(request("real", keys(1, 600), 600 * 16, 2, arrival));
      d.run(Long.MAX_VALUE);
      firstTokens[run] = d.firstToken.get("real") - arrival;
      if (run == 1) {
        assertThat(d.engine.warmsDropped()).isEqualTo(2); // one refused, one gave way
      }
    }
    // 600 blocks of a real request next to 700 warm ones do not fit in 1,000: the warm-up gave
    // way, and the request's passes carried no warm token.
    assertThat(firstTokens[1]).isEqualTo(firstTokens[0]);
  }

  @Test
  void aRequestArrivingDuringAWarmPass_waitsAtMostThatPass() {
    long[] firstTokens = new long[2];
    for (int run = 0; run < 2; run++) {
      Driven d = new Driven(100_000, 256);
      if (run == 1) {
        d.engine.submitWarm(warm(keys(1_000_000, 2_000)));
        d.engine.startPass(0); // a warm pass under way
      }
      long arrival = 1;
      d.engine.submit(request("real", keys(1, 100), 100 * 16, 2, arrival));
      if (run == 1) {
        d.now = d.engine.passEnd();
        d.engine.completePass();
      } else {
        d.now = arrival;
      }
      d.run(Long.MAX_VALUE);
      firstTokens[run] = d.firstToken.get("real") - arrival;
    }
    // The warm pass (2,048 tokens, about 40 ms) ends first; the request's own prefill pass carries
    // no warm token (one more chunk there would take it past 60 ms).
    long warmPass = firstTokens[1] - firstTokens[0];
    assertThat(warmPass).isPositive().isLessThan(60_000);
  }

  @Test
  void aCancelledWarmUp_stopsAtThePasssEnd() {
    Driven d = new Driven(100_000, 256);
    LabSequence w = warm(keys(1, 2_000));
    d.engine.submitWarm(w);
    d.run(1); // one pass of it
    w.cancelled = true;
    d.run(Long.MAX_VALUE);
    assertThat(d.engine.warmedTokens()).isEqualTo(LabEngine.WARM_CHUNK_TOKENS);
    assertThat(d.engine.warmsDropped()).isEqualTo(1);
    assertThat(d.engine.hasWork()).isFalse();
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

  private static Workload agents() {
    return Workloads.byName(
        "agents",
        Map.of("programs", "6", "medianTurns", "12", "fanOut", "0.3", "medianToolSeconds", "1"),
        3);
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

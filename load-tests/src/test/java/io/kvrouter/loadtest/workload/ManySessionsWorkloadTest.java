package io.kvrouter.loadtest.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class ManySessionsWorkloadTest {

  private static Workload sessions(Map<String, String> extra, long seed) {
    Map<String, String> p = new HashMap<>();
    p.put("sessions", "2000");
    p.put("sessionQps", "200");
    p.put("t2Ratio", "0.5");
    p.put("maxTurns", "4");
    p.put("thinkSeconds", "4");
    p.put("systemPrefixTokens", "64");
    p.put("systemPrefixPool", "8");
    p.put("userTokens", "40");
    p.put("answerTokens", "30");
    p.putAll(extra);
    return Workloads.byName("many-sessions", p, seed);
  }

  private final Workload w = sessions(Map.of(), 5);

  private Map<String, List<WorkloadRequest>> bySession(Workload workload) {
    return workload.stream()
        .collect(
            Collectors.groupingBy(
                WorkloadRequest::session,
                Collectors.collectingAndThen(
                    Collectors.toList(),
                    l ->
                        l.stream()
                            .sorted(Comparator.comparingInt(WorkloadRequest::turn))
                            .toList())));
  }

  @Test
  void everySessionStarts_andGoesOnWithItsT2Ratio_upToMaxTurns() {
    Map<String, List<WorkloadRequest>> s = bySession(w);
    assertThat(s).hasSize(2000);
    int[] turns = new int[5];
    for (List<WorkloadRequest> session : s.values()) {
      assertThat(session.get(0).turn()).isZero();
      assertThat(session).hasSizeLessThanOrEqualTo(4);
      turns[session.size()]++;
    }
    // With t2Ratio 0.5: half the sessions stop after their first turn, a quarter after their
    // second, an eighth after their third, the rest (an eighth) at maxTurns 4.
    assertThat(turns[1]).isBetween(900, 1100);
    assertThat(turns[2]).isBetween(400, 600);
    assertThat(turns[3]).isBetween(170, 330);
    assertThat(turns[4]).isBetween(170, 330);
    // Sessions start at 200/s: 2,000 of them over about 10 s.
    long lastStart = s.values().stream().mapToLong(l -> l.get(0).arrivalMicros()).max().orElse(0);
    assertThat(lastStart / 1e6).isBetween(9.0, 11.0);
  }

  /**
   * Each request carries its answer's tokens (the lab engine caches their blocks): its prompt then
   * {@code outputLength} tokens, which the session's next prompt opens with, token for token.
   */
  @Test
  void eachRequestCarriesItsAnswer_whichTheNextTurnRepeats() {
    int checked = 0;
    for (List<WorkloadRequest> session : bySession(w).values()) {
      for (int t = 0; t < session.size(); t++) {
        WorkloadRequest r = session.get(t);
        int[] answered = r.answered().toArray();
        assertThat(answered).hasSize(r.inputLength() + r.outputLength());
        assertThat(Arrays.copyOf(answered, r.inputLength())).isEqualTo(r.promptTokenIds());
        if (t + 1 < session.size()) {
          int[] next = session.get(t + 1).promptTokenIds();
          assertThat(Arrays.copyOf(next, answered.length)).isEqualTo(answered);
          checked++;
        }
      }
    }
    assertThat(checked).isGreaterThan(500);
  }

  @Test
  void aFollowUp_extendsThePreviousPromptAndItsAnswer_aThinkTimeLater() {
    int checked = 0;
    for (List<WorkloadRequest> session : bySession(w).values()) {
      for (int t = 1; t < session.size(); t++) {
        WorkloadRequest prev = session.get(t - 1);
        WorkloadRequest next = session.get(t);
        int[] p = prev.promptTokenIds();
        int[] n = next.promptTokenIds();
        assertThat(Arrays.copyOf(n, p.length)).containsExactly(p);
        assertThat(next.inputLength())
            .isBetween(p.length + prev.outputLength() + 20, p.length + prev.outputLength() + 60);
        long gap = next.arrivalMicros() - prev.arrivalMicros();
        assertThat(gap).isBetween(2_000_000L, 6_000_000L);
        checked++;
      }
    }
    assertThat(checked).isGreaterThan(900);
  }

  @Test
  void sessionsDrawTheirSystemPrompt_fromThePool_andShareNothingAfterIt() {
    Set<List<Integer>> systems = new HashSet<>();
    Map<List<Integer>, Integer> count = new HashMap<>();
    for (List<WorkloadRequest> session : bySession(w).values()) {
      int[] first = session.get(0).promptTokenIds();
      List<Integer> system = Arrays.stream(Arrays.copyOf(first, 64)).boxed().toList();
      systems.add(system);
      count.merge(system, 1, Integer::sum);
    }
    assertThat(systems).hasSize(8);
    assertThat(count.values()).allSatisfy(c -> assertThat(c).isBetween(180, 320));
    List<WorkloadRequest> a = bySession(w).get("s-0");
    List<WorkloadRequest> b = bySession(w).get("s-1");
    assertThat(a.get(0).promptTokenIds()[64]).isNotEqualTo(b.get(0).promptTokenIds()[64]);
  }

  @Test
  void theSameSeed_givesTheSameWorkload_anotherSeedAnother() {
    Workload again = sessions(Map.of(), 5);
    Workload other = sessions(Map.of(), 6);
    assertThat(again.size()).isEqualTo(w.size());
    for (int i = 0; i < w.size(); i++) {
      assertThat(again.get(i).arrivalMicros()).isEqualTo(w.get(i).arrivalMicros());
      assertThat(again.get(i).session()).isEqualTo(w.get(i).session());
      assertThat(again.get(i).promptTokenIds()).containsExactly(w.get(i).promptTokenIds());
    }
    assertThat(other.get(0).promptTokenIds()).isNotEqualTo(w.get(0).promptTokenIds());
  }

  @Test
  void t2RatioZero_isOneTurnSessions_andBadParametersAreNamed() {
    Workload single = sessions(Map.of("t2Ratio", "0"), 5);
    assertThat(single.size()).isEqualTo(2000);
    assertThat(single.stream().allMatch(r -> r.turn() == 0)).isTrue();
    assertThatThrownBy(() -> sessions(Map.of("t2Ratio", "1"), 5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("t2Ratio");
    assertThatThrownBy(() -> sessions(Map.of("turns", "3"), 5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("turns");
  }
}

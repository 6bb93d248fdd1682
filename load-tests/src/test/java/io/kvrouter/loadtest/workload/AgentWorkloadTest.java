package io.kvrouter.loadtest.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class AgentWorkloadTest {

  private static final Workload AGENTS =
      Workloads.byName("agents", Map.of("programs", "12", "fanOut", "0.2"), 7);

  private static Map<String, List<WorkloadRequest>> sessions(Workload w) {
    Map<String, List<WorkloadRequest>> out =
        w.stream().collect(Collectors.groupingBy(WorkloadRequest::session));
    out.values().forEach(l -> l.sort(Comparator.comparingInt(WorkloadRequest::turn)));
    return out;
  }

  private static boolean isSub(String session) {
    return session.contains("/sub-");
  }

  /** Length of the common prefix of two prompts in whole blocks of the workload. */
  private static int sharedBlocks(WorkloadRequest a, WorkloadRequest b) {
    long[] x = a.traceBlockIds();
    long[] y = b.traceBlockIds();
    int n = 0;
    while (n < x.length && n < y.length && x[n] == y[n]) {
      n++;
    }
    return n;
  }

  @Test
  void sameSeed_sameWorkload_otherSeed_another() {
    Workload again = Workloads.byName("agents", Map.of("programs", "12", "fanOut", "0.2"), 7);
    assertThat(again.size()).isEqualTo(AGENTS.size());
    for (int i = 0; i < AGENTS.size(); i++) {
      WorkloadRequest a = AGENTS.get(i);
      WorkloadRequest b = again.get(i);
      assertThat(b.arrivalMicros()).isEqualTo(a.arrivalMicros());
      assertThat(b.session()).isEqualTo(a.session());
      assertThat(b.outputLength()).isEqualTo(a.outputLength());
      assertThat(b.traceBlockIds()).containsExactly(a.traceBlockIds());
      assertThat(again.programs().of(b)).isEqualTo(AGENTS.programs().of(a));
    }
    Workload other = Workloads.byName("agents", Map.of("programs", "12", "fanOut", "0.2"), 8);
    assertThat(other.get(0).traceBlockIds()).isNotEqualTo(AGENTS.get(0).traceBlockIds());
  }

  @Test
  void sessions_haveTheIssuesShape() {
    Map<String, List<WorkloadRequest>> sessions = sessions(AGENTS);
    Map<Long, Integer> prefixByFirstBlock = new HashMap<>();
    int top = 0;
    for (Map.Entry<String, List<WorkloadRequest>> e : sessions.entrySet()) {
      List<WorkloadRequest> turns = e.getValue();
      if (isSub(e.getKey())) {
        assertThat(turns.size()).isBetween(3, 8);
        continue;
      }
      top++;
      // The compaction requests are turns too: 10-200 agent turns, plus those.
      assertThat(turns.size()).isBetween(AgentWorkload.MIN_TURNS, AgentWorkload.MAX_TURNS + 40);
      for (WorkloadRequest r : turns) {
        assertThat(r.inputLength()).isLessThanOrEqualTo(AgentWorkload.MAX_COMPACT_AT + 30_000);
        assertThat(r.outputLength()).isBetween(20, 6_000);
      }
      // The first request opens with the kind's prefix, 10-25k tokens every session of the kind
      // shares.
      prefixByFirstBlock.merge(turns.get(0).traceBlockIds()[0], 1, Integer::sum);
    }
    assertThat(top).isEqualTo(12);
    assertThat(prefixByFirstBlock.size()).isBetween(1, 4);
    List<WorkloadRequest> firsts =
        sessions.entrySet().stream()
            .filter(e -> !isSub(e.getKey()))
            .map(e -> e.getValue().get(0))
            .toList();
    for (WorkloadRequest a : firsts) {
      for (WorkloadRequest b : firsts) {
        if (a != b && a.traceBlockIds()[0] == b.traceBlockIds()[0]) {
          int shared = sharedBlocks(a, b) * 64;
          assertThat(shared).isBetween(AgentWorkload.MIN_PREFIX - 64, AgentWorkload.MAX_PREFIX);
        }
      }
    }
  }

  @Test
  void aToolCallTurn_isExtendedByTheNextTurn_afterAGapInTheIssuesRange() {
    Programs programs = AGENTS.programs();
    int checked = 0;
    for (List<WorkloadRequest> turns : sessions(AGENTS).values()) {
      for (int t = 0; t + 1 < turns.size(); t++) {
        WorkloadRequest prev = turns.get(t);
        WorkloadRequest next = turns.get(t + 1);
        Programs.Step step = programs.of(next);
        if (next.inputLength() < prev.inputLength()) {
          continue; // prev asked for a summary: the history is compacted
        }
        assertThat(programs.of(prev).endsInToolCall()).isTrue();
        if (step.after().size() != 1) {
          continue; // after a fan-out's join
        }
        assertThat(step.after()).containsExactly(Programs.key(prev));
        // The next prompt is the previous prompt, its reply and a tool result of 0.5-10k tokens,
        // shared up to the previous prompt's last whole block.
        int added = next.inputLength() - prev.inputLength() - prev.outputLength();
        if (step.gapMicros() > 0) {
          // (+ 300: the instruction of a request for a summary)
          assertThat(added)
              .isBetween(AgentWorkload.MIN_TOOL_RESULT, AgentWorkload.MAX_TOOL_RESULT + 300);
          assertThat(step.gapMicros())
              .isBetween(AgentWorkload.MIN_GAP_MICROS, AgentWorkload.MAX_GAP_MICROS);
        }
        assertThat(sharedBlocks(prev, next)).isEqualTo(prev.inputLength() / 64);
        checked++;
      }
      assertThat(programs.of(turns.get(turns.size() - 1)).endsInToolCall()).isFalse();
    }
    assertThat(checked).isGreaterThan(300);
  }

  @Test
  void aLongHistory_isCompacted_intoThePrefixAndASummary() {
    Programs programs = AGENTS.programs();
    int compactions = 0;
    for (Map.Entry<String, List<WorkloadRequest>> e : sessions(AGENTS).entrySet()) {
      List<WorkloadRequest> turns = e.getValue();
      for (int t = 1; t < turns.size(); t++) {
        WorkloadRequest summary = turns.get(t - 1);
        WorkloadRequest after = turns.get(t);
        if (after.inputLength() >= summary.inputLength()) {
          continue;
        }
        compactions++;
        assertThat(summary.inputLength()).isGreaterThan(AgentWorkload.MIN_COMPACT_AT);
        assertThat(programs.of(summary).endsInToolCall()).isFalse();
        assertThat(summary.outputLength()).isBetween(2_000, 6_000);
        // The prompt after it: the prefix, the summary, a continuation; the history is gone.
        assertThat(sharedBlocks(summary, after) * 64)
            .isBetween(AgentWorkload.MIN_PREFIX - 64, AgentWorkload.MAX_PREFIX);
        assertThat(after.inputLength() - summary.outputLength())
            .isBetween(AgentWorkload.MIN_PREFIX, AgentWorkload.MAX_PREFIX + 100);
      }
    }
    assertThat(compactions).isGreaterThan(0);
  }

  @Test
  void aFanOut_sendsItsSubAgentsWithinAMillisecond_onTheParentsPrefix_andJoins() {
    Programs programs = AGENTS.programs();
    Map<String, List<WorkloadRequest>> sessions = sessions(AGENTS);
    Map<String, WorkloadRequest> byKey = new HashMap<>();
    AGENTS.stream().forEach(r -> byKey.put(Programs.key(r), r));
    Map<String, List<WorkloadRequest>> byParent = new HashMap<>();
    for (Map.Entry<String, List<WorkloadRequest>> e : sessions.entrySet()) {
      if (isSub(e.getKey())) {
        WorkloadRequest first = e.getValue().get(0);
        Programs.Step step = programs.of(first);
        byParent.computeIfAbsent(step.after().get(0), k -> new ArrayList<>()).add(first);
        assertThat(step.program()).isEqualTo(e.getKey().substring(0, e.getKey().indexOf('/')));
      }
    }
    assertThat(byParent).isNotEmpty();
    Set<String> joins = new HashSet<>();
    for (Map.Entry<String, List<WorkloadRequest>> e : byParent.entrySet()) {
      WorkloadRequest parent = byKey.get(e.getKey());
      List<WorkloadRequest> subs = e.getValue();
      assertThat(subs.size()).isBetween(2, 4);
      long spread = 0;
      for (WorkloadRequest s : subs) {
        spread = Math.max(spread, programs.of(s).gapMicros());
        // The parent's prompt and reply, then the sub-task.
        assertThat(s.inputLength())
            .isBetween(
                parent.inputLength() + parent.outputLength() + 200,
                parent.inputLength() + parent.outputLength() + 1_000);
        assertThat(sharedBlocks(parent, s)).isEqualTo(parent.inputLength() / 64);
      }
      assertThat(spread).isLessThan(1_000);
      joins.add(e.getKey());
    }
    // The parent's next turn waits for every sub-agent's last reply.
    int joined = 0;
    for (WorkloadRequest r : AGENTS.requests()) {
      Programs.Step step = programs.of(r);
      if (step.after().size() > 1) {
        joined++;
        assertThat(step.after()).allMatch(k -> isSub(k));
        assertThat(step.after().size()).isBetween(2, 4);
      }
    }
    assertThat(joined).isEqualTo(joins.size());
  }

  @Test
  void badParameters_areRejectedByName() {
    assertThatThrownBy(() -> Workloads.byName("agents", Map.of("fanOut", "2"), 1))
        .hasMessageContaining("fanOut");
    assertThatThrownBy(() -> Workloads.byName("agents", Map.of("turns", "2"), 1))
        .hasMessageContaining("turns");
  }

  @Test
  void blockIds_shareExactlyTheWholeBlocksOfSharedContent() {
    List<AgentWorkload.Piece> a =
        List.of(new AgentWorkload.Piece(1, 100), new AgentWorkload.Piece(2, 50));
    List<AgentWorkload.Piece> b =
        List.of(
            new AgentWorkload.Piece(1, 100),
            new AgentWorkload.Piece(2, 50),
            new AgentWorkload.Piece(3, 40));
    long[] x = AgentWorkload.blockIds(a, 150, 64);
    long[] y = AgentWorkload.blockIds(b, 190, 64);
    assertThat(x).hasSize(3);
    assertThat(y).hasSize(3);
    assertThat(Arrays.copyOf(y, 2)).containsExactly(Arrays.copyOf(x, 2));
    assertThat(y[2]).isNotEqualTo(x[2]); // 22 tokens then, 62 now
  }
}

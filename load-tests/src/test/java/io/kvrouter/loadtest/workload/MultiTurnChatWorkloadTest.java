package io.kvrouter.loadtest.workload;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class MultiTurnChatWorkloadTest {

  private final Workload chat =
      Workloads.byName(
          "multi-turn-chat",
          Map.of(
              "sessions",
              "10",
              "turns",
              "4",
              "systemTokens",
              "100",
              "userTokens",
              "40",
              "answerTokens",
              "30"),
          21);

  private List<WorkloadRequest> session(String id) {
    return chat.stream()
        .filter(r -> r.session().equals(id))
        .sorted(Comparator.comparingInt(WorkloadRequest::turn))
        .collect(Collectors.toList());
  }

  @Test
  void everySession_hasAllItsTurns_inArrivalOrder() {
    assertThat(chat.size()).isEqualTo(40);
    for (int s = 0; s < 10; s++) {
      List<WorkloadRequest> turns = session("chat-" + s);
      assertThat(turns).extracting(WorkloadRequest::turn).containsExactly(0, 1, 2, 3);
      for (int t = 1; t < turns.size(); t++) {
        assertThat(turns.get(t).arrivalMicros())
            .isGreaterThanOrEqualTo(turns.get(t - 1).arrivalMicros());
        assertThat(turns.get(t).index()).isGreaterThan(turns.get(t - 1).index());
      }
    }
  }

  @Test
  void eachTurnsPrompt_extendsThePreviousPromptAndItsAnswer() {
    List<WorkloadRequest> turns = session("chat-3");
    for (int t = 1; t < turns.size(); t++) {
      WorkloadRequest prev = turns.get(t - 1);
      WorkloadRequest next = turns.get(t);
      int[] p = prev.promptTokenIds();
      int[] n = next.promptTokenIds();
      assertThat(Arrays.copyOf(n, p.length)).containsExactly(p);
      assertThat(next.inputLength())
          .isBetween(p.length + prev.outputLength() + 20, p.length + prev.outputLength() + 60);
    }
  }

  @Test
  void sessions_shareTheSystemPrompt_andNothingAfterIt() {
    int[] a = session("chat-0").get(0).promptTokenIds();
    int[] b = session("chat-1").get(0).promptTokenIds();
    assertThat(Arrays.copyOf(b, 100)).containsExactly(Arrays.copyOf(a, 100));
    assertThat(b[100]).isNotEqualTo(a[100]);
  }

  @Test
  void sameSeed_givesTheSameSessions() {
    Workload again =
        Workloads.byName(
            "multi-turn-chat",
            Map.of(
                "sessions",
                "10",
                "turns",
                "4",
                "systemTokens",
                "100",
                "userTokens",
                "40",
                "answerTokens",
                "30"),
            21);
    for (int i = 0; i < chat.size(); i++) {
      assertThat(again.get(i).session()).isEqualTo(chat.get(i).session());
      assertThat(again.get(i).arrivalMicros()).isEqualTo(chat.get(i).arrivalMicros());
      assertThat(again.get(i).promptTokenIds()).containsExactly(chat.get(i).promptTokenIds());
    }
  }
}

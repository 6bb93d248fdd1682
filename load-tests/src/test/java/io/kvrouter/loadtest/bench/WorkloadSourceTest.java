package io.kvrouter.loadtest.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.Workloads;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WorkloadSourceTest {

  private static Workload gsp() {
    return Workloads.byName(
        "sglang-gsp",
        Map.of(
            "groups",
            "2",
            "promptsPerGroup",
            "3",
            "systemTokens",
            "32",
            "questionTokens",
            "8",
            "outputTokens",
            "4",
            "qps",
            "10"),
        1);
  }

  private static List<BenchRequest> drain(BenchRequestSource s) {
    List<BenchRequest> out = new ArrayList<>();
    s.forEachRemaining(out::add);
    return out;
  }

  @Test
  void workloadRequestsBecomeTokenPromptsAtTheirArrivalTimes() {
    Workload w = gsp();
    BenchRequestSource source = WorkloadSource.of(w, null, 0);
    assertThat(source.name()).isEqualTo(w.name());
    assertThat(source.sizeHint()).isEqualTo(6);
    List<BenchRequest> rs = drain(source);
    assertThat(rs).hasSize(6);
    for (int i = 0; i < rs.size(); i++) {
      BenchRequest r = rs.get(i);
      assertThat(r.offsetNanos()).isEqualTo(w.get(i).arrivalMicros() * 1000);
      assertThat(r.maxTokens()).isEqualTo(4);
      assertThat(r.group()).isEqualTo(w.get(i).session());
      assertThat(((BenchPrompt.TokenIds) r.prompt()).ids())
          .containsExactly(w.get(i).promptTokenIds());
    }
    // requests of one group share their system prompt's tokens
    for (BenchRequest a : rs) {
      for (BenchRequest b : rs) {
        if (a.group().equals(b.group())) {
          int[] x = ((BenchPrompt.TokenIds) a.prompt()).ids();
          int[] y = ((BenchPrompt.TokenIds) b.prompt()).ids();
          assertThat(Arrays.copyOf(x, 32)).containsExactly(Arrays.copyOf(y, 32));
        }
      }
    }
  }

  @Test
  void vocabularyFolding_andOwnArrivals() {
    List<BenchRequest> rs = drain(WorkloadSource.of(gsp(), ArrivalSchedule.bursts(10, 0), 1000));
    assertThat(rs)
        .allSatisfy(
            r -> {
              assertThat(r.offsetNanos()).isZero();
              int[] ids = ((BenchPrompt.TokenIds) r.prompt()).ids();
              assertThat(Arrays.stream(ids).min().orElseThrow()).isGreaterThanOrEqualTo(0);
              assertThat(Arrays.stream(ids).max().orElseThrow()).isLessThan(1000);
            });
  }

  @Test
  void aWorkloadRunsAgainstAServer() throws Exception {
    try (FakeOpenAiServer server = new FakeOpenAiServer(FakeOpenAiServer.Mode.STREAM, 2, 0, 6)) {
      BenchConfig cfg =
          BenchConfig.defaults(List.of(server.base()), "fake-model")
              .withLimits(-1, Duration.ofSeconds(30), 64, Duration.ofSeconds(20));
      BenchRun run = new BenchRunner(cfg).run(WorkloadSource.of(gsp().speedUp(100), null, 0));
      assertThat(run.outcomes())
          .hasSize(6)
          .allSatisfy(o -> assertThat(o.status()).isEqualTo(RequestOutcome.Status.OK));
      assertThat(server.bodies())
          .allSatisfy(b -> assertThat(b).containsPattern("\"prompt\":\\[\\d+,"));
      assertThat(run.workload()).isEqualTo("sglang-gsp");
    }
  }
}

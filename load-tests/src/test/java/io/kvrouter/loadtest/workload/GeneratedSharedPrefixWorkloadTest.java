package io.kvrouter.loadtest.workload;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class GeneratedSharedPrefixWorkloadTest {

  private final Workload gsp = Workloads.byName("sglang-gsp", Map.of(), 11);

  @Test
  void defaults_are64GroupsOf16PromptsOf2048Plus128Tokens_with256Output() {
    assertThat(gsp.size()).isEqualTo(1024);
    Map<String, Long> perGroup =
        gsp.stream()
            .collect(Collectors.groupingBy(WorkloadRequest::session, Collectors.counting()));
    assertThat(perGroup).hasSize(64).allSatisfy((g, n) -> assertThat(n).isEqualTo(16));
    assertThat(gsp.requests())
        .allSatisfy(
            r -> {
              assertThat(r.inputLength()).isEqualTo(2048 + 128);
              assertThat(r.outputLength()).isEqualTo(256);
              assertThat(r.arrivalMicros()).isZero();
              assertThat(r.traceBlockIds()).isEmpty();
            });
  }

  @Test
  void promptsOfOneGroup_shareExactlyTheSystemPrompt_andGroupsShareNothing() {
    List<WorkloadRequest> g0 =
        gsp.stream().filter(r -> r.session().equals("group-0")).collect(Collectors.toList());
    List<WorkloadRequest> g1 =
        gsp.stream().filter(r -> r.session().equals("group-1")).collect(Collectors.toList());
    int[] a = g0.get(0).promptTokenIds();
    int[] b = g0.get(1).promptTokenIds();
    int[] c = g1.get(0).promptTokenIds();
    assertThat(Arrays.copyOf(b, 2048)).containsExactly(Arrays.copyOf(a, 2048));
    assertThat(Arrays.copyOfRange(b, 2048, 2064)).isNotEqualTo(Arrays.copyOfRange(a, 2048, 2064));
    assertThat(Arrays.copyOf(c, 16)).isNotEqualTo(Arrays.copyOf(a, 16));
  }

  @Test
  void requests_areShuffledAcrossGroups() {
    List<String> firstSixteen =
        gsp.requests().subList(0, 16).stream()
            .map(WorkloadRequest::session)
            .distinct()
            .collect(Collectors.toList());
    assertThat(firstSixteen.size()).isGreaterThan(4);
  }

  @Test
  void sameSeed_givesTheSameWorkload_otherSeedAnother() {
    Workload again = Workloads.byName("sglang-gsp", Map.of(), 11);
    Workload other = Workloads.byName("sglang-gsp", Map.of(), 12);
    for (int i = 0; i < gsp.size(); i += 97) {
      assertThat(again.get(i).session()).isEqualTo(gsp.get(i).session());
      assertThat(again.get(i).promptTokenIds()).containsExactly(gsp.get(i).promptTokenIds());
    }
    assertThat(other.get(0).promptTokenIds()).isNotEqualTo(gsp.get(0).promptTokenIds());
  }

  @Test
  void finiteQps_spreadsArrivalsAsAPoissonProcess() {
    Workload paced = Workloads.byName("sglang-gsp", Map.of("qps", "8"), 11);
    for (int i = 1; i < paced.size(); i++) {
      assertThat(paced.get(i).arrivalMicros())
          .isGreaterThanOrEqualTo(paced.get(i - 1).arrivalMicros());
    }
    double seconds = paced.durationMicros() / 1e6;
    // 1024 exponential gaps of mean 1/8 s: 128 s ± 4 s (one sigma), allow five sigmas
    assertThat(seconds).isBetween(108.0, 148.0);
  }
}

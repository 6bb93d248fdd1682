package io.kvrouter.loadtest.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class WorkloadsTest {

  @Test
  void everyPublishedName_buildsAWorkload() {
    for (String name : Workloads.NAMES) {
      Map<String, String> params =
          name.equals("llmd-b2b") ? Map.of("durationScale", "0.01") : Map.of();
      Workload w = Workloads.byName(name, params, 1);
      assertThat(w.name()).isEqualTo(name);
      assertThat(w.size()).as(name).isPositive();
    }
  }

  @Test
  void unknownName_isRejectedWithTheKnownNames() {
    assertThatThrownBy(() -> Workloads.byName("sharegpt", Map.of(), 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown workload 'sharegpt'")
        .hasMessageContaining("sglang-gsp");
  }

  @Test
  void unknownOrBadParameter_isRejected() {
    assertThatThrownBy(() -> Workloads.byName("sglang-gsp", Map.of("group", "3"), 1))
        .hasMessageContaining("no parameter(s) [group]");
    assertThatThrownBy(() -> Workloads.byName("sglang-gsp", Map.of("groups", "-3"), 1))
        .hasMessageContaining("'groups'")
        .hasMessageContaining("positive");
    assertThatThrownBy(() -> Workloads.byName("llmd-b2b", Map.of("stages", "3"), 1))
        .hasMessageContaining("qps:seconds");
  }

  @Test
  void traceSpeedUp_dividesArrivalTimes() {
    Workload fast = Workloads.byName(Workloads.MOONCAKE_SYNTHETIC, Map.of("speedUp", "10"), 0);
    assertThat(fast.durationMicros()).isEqualTo(Traces.synthetic().durationMicros() / 10);
  }
}

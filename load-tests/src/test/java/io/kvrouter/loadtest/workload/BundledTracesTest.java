package io.kvrouter.loadtest.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class BundledTracesTest {

  @Test
  void bundledTraces_readByName_withTheirPublishedRequestCounts() {
    assertThat(Traces.conversation().size()).isEqualTo(12_031);
    assertThat(Traces.synthetic().size()).isEqualTo(3_993);
  }

  @Test
  void anExplicitPath_winsOverTheBundledTrace() {
    assertThatThrownBy(
            () ->
                Workloads.byName(
                    Workloads.MOONCAKE_CONVERSATION, Map.of("path", "/nonexistent/t.jsonl"), 0L))
        .hasMessageContaining("/nonexistent/t.jsonl");
  }

  @Test
  void anUnknownBundledName_isRefusedWithTheKnownNames() {
    assertThatThrownBy(() -> BundledTraces.open("mooncake-other"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("mooncake-conversation");
  }
}

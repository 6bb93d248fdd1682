package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.Workloads;
import io.kvrouter.protocol.keys.BlockKeys;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PromptKeysTest {

  @Test
  void memoisedTraceKeys_equalBlockKeysOfTheExpandedPrompt() {
    Workload w = Workloads.bundled(Workloads.MOONCAKE_CONVERSATION, 0L).limit(300);
    for (int blockSize : new int[] {16, 64}) {
      PromptKeys keys = PromptKeys.compute(w, LabConfig.MODEL, blockSize);
      BlockKeys bk = BlockKeys.of(LabConfig.MODEL, blockSize);
      for (int i = 0; i < w.size(); i++) {
        assertThat(keys.of(i))
            .as("request %d, block %d", i, blockSize)
            .isEqualTo(bk.keys(w.get(i).promptTokenIds()));
      }
    }
  }

  @Test
  void generatedWorkload_keysAreBlockKeysOfThePrompt() {
    Workload w = Workloads.byName("sglang-gsp", Map.of("groups", "2", "promptsPerGroup", "3"), 7);
    PromptKeys keys = PromptKeys.compute(w, LabConfig.MODEL, 16);
    BlockKeys bk = BlockKeys.of(LabConfig.MODEL, 16);
    for (int i = 0; i < w.size(); i++) {
      assertThat(keys.of(i)).isEqualTo(bk.keys(w.get(i).promptTokenIds()));
    }
    // prompts of one group share their system prompt's keys: two groups, two first keys
    assertThat(
            java.util.stream.IntStream.range(0, w.size())
                .mapToLong(i -> keys.of(i)[0])
                .distinct()
                .count())
        .isEqualTo(2);
  }
}

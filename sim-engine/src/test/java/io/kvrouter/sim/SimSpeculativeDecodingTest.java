package io.kvrouter.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvrouter.protocol.engine.EngineEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The sim running speculative decoding as vLLM does for its prefix cache: an EAGLE-style method
 * recomputes the last matched block of a hit, and changes neither the block hashes nor the events.
 */
class SimSpeculativeDecodingTest {

  private static final TimingModel LINEAR =
      (prefill, decode, active, total) -> 1000 + 10L * prefill + 100L * decode;

  /** Runs {@code tokens} on the engine alone: the cached prompt tokens it reported. */
  private static int run(SimEngineCore core, String id, int[] tokens) {
    var arrival = new VirtualTimeDriver.TimedRequest(0, SimRequest.of(id, tokens, 1));
    return VirtualTimeDriver.run(core, List.of(arrival)).get(0).cachedPromptTokens();
  }

  /** Cached tokens of a 100-token prompt run twice, and the block hashes the engine announced. */
  private static int[] repeated(String method, List<Long> hashes) {
    SimEngineCore core =
        new SimEngineCore(
            new SimEngineConfig(16, 64, 8, 8192, "0", LINEAR).withSpeculativeMethod(method));
    core.setKvEventListener(
        (events, at) -> {
          for (EngineEvent e : events) {
            if (e instanceof EngineEvent.BlockStored s) {
              for (long h : s.blockHashes()) {
                hashes.add(h);
              }
            }
          }
        });
    int[] prompt = IntStream.range(0, 100).map(i -> 7 * i + 3).toArray();
    return new int[] {run(core, "a", prompt), run(core, "b", prompt)};
  }

  @Test
  void eagle_recomputesTheLastMatchedBlock_withTheSameHashesAndEvents() {
    List<Long> plainHashes = new ArrayList<>();
    List<Long> eagleHashes = new ArrayList<>();
    int[] plain = repeated("none", plainHashes);
    int[] eagle = repeated("eagle", eagleHashes);

    assertThat(plain).containsExactly(0, 96); // 6 full blocks of 100 tokens, all reused
    assertThat(eagle)
        .as("one block fewer: the drafter's block is recomputed")
        .containsExactly(0, 80);
    assertThat(eagleHashes).as("vLLM's hashes do not change").isEqualTo(plainHashes);
    assertThat(eagleHashes).hasSize(6);
  }

  @Test
  void methodsWithoutTheTargetsHiddenStates_reuseEveryMatchedBlock() {
    assertThat(repeated("ngram", new ArrayList<>())).containsExactly(0, 96);
    assertThat(repeated("deepseek_mtp", new ArrayList<>()))
        .as("renamed mtp")
        .containsExactly(0, 80);
  }

  @Test
  void anUnknownMethod_isRefusedWithTheAcceptedOnes() {
    assertThatThrownBy(() -> SimEngineConfig.defaults().withSpeculativeMethod("eagel"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("eagle3")
        .hasMessageContaining("eagel");
  }
}

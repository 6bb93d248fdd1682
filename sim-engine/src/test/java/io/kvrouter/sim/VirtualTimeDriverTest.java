package io.kvrouter.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class VirtualTimeDriverTest {

  /** 1 ms per pass plus 10 µs per prefill token and 100 µs per decoding request. */
  private static final TimingModel LINEAR =
      (prefill, decode, active, total) -> 1000 + 10L * prefill + 100L * decode;

  @Test
  void idleEngine_jumpsToTheNextArrival_andTimesRequestsInVirtualTime() {
    SimEngineCore core = new SimEngineCore(new SimEngineConfig(16, 64, 8, 8192, "0", LINEAR));
    int[] prompt = IntStream.range(0, 32).toArray();
    List<VirtualTimeDriver.RequestResult> results =
        VirtualTimeDriver.run(
            core,
            List.of(
                new VirtualTimeDriver.TimedRequest(5_000_000, SimRequest.of("a", prompt, 2)),
                new VirtualTimeDriver.TimedRequest(3_600_000_000L, SimRequest.of("b", prompt, 2))));
    assertThat(results).hasSize(2);
    VirtualTimeDriver.RequestResult a = results.get(0);
    assertThat(a.firstTokenMicros() - a.arrivalMicros()).isEqualTo(1000 + 320);
    assertThat(a.finishMicros() - a.firstTokenMicros()).isEqualTo(1100);
    VirtualTimeDriver.RequestResult b = results.get(1);
    // an hour later, the same prompt: one block cached (the last token is always computed)
    assertThat(b.arrivalMicros()).isEqualTo(3_600_000_000L);
    assertThat(b.cachedPromptTokens()).isEqualTo(16);
    assertThat(b.firstTokenMicros() - b.arrivalMicros()).isEqualTo(1000 + 160);
    assertThat(b.outputTokens()).isEqualTo(2);
  }
}

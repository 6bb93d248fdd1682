package io.kvrouter.tracker.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class EngineTimingTest {

  /** The Dynamo mocker's vLLM prefill pass: 4.209989e-7·x² + 1.518344e-2·x + 16.50142 ms. */
  private static double mockerPrefill(double x) {
    return 4.209989e-7 * x * x + 1.518344e-2 * x + 16.50142;
  }

  @Test
  void onePass_isTheMockersPrefillPolynomial() {
    for (int x : new int[] {1, 512, 4_096, 8_192}) {
      assertThat(EngineTiming.MOCKER.ttftMillis(0, x, 8_192, false, 0))
          .as("x=%d", x)
          .isCloseTo(mockerPrefill(x), within(1e-6));
    }
  }

  @Test
  void longerQueues_takeOnePassPerChunk_andDecodingAddsTheDecodeStepToEachPass() {
    double twoPasses = EngineTiming.MOCKER.ttftMillis(8_192, 4_096, 8_192, false, 0);
    assertThat(twoPasses).isCloseTo(mockerPrefill(8_192) + mockerPrefill(4_096), within(1e-6));
    double decoding = EngineTiming.MOCKER.ttftMillis(8_192, 4_096, 8_192, true, 0.5);
    double step = -25.74 * 0.25 + 54.01 * 0.5 + 5.74;
    assertThat(decoding - twoPasses).isCloseTo(2 * step, within(1e-6));
  }

  @Test
  void features_predictExactlyWhatTtftMillisComputes() {
    double[] phi = new double[EngineTiming.SIZE];
    EngineTiming t = new EngineTiming(10, 20, 3, 2);
    EngineTiming.features(13_000, 6_000, true, 0.3, phi);
    assertThat(t.predict(phi))
        .isCloseTo(t.ttftMillis(10_000, 3_000, 6_000, true, 0.3), within(1e-9));
  }
}

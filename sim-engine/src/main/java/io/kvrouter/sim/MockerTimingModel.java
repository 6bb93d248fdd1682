package io.kvrouter.sim;

/**
 * The Dynamo mocker's vLLM-like pass-time polynomial (ai-dynamo/dynamo {@code
 * lib/mocker/src/common/perf_model.rs}, its {@code Polynomial} model, since moved into the
 * AISimulate engine with the same coefficients):
 *
 * <pre>
 * prefill_ms = 4.209989e-7·x² + 1.518344e-2·x + 16.50142   (x = uncached prompt tokens; 0 if none)
 * decode_ms  = max(1, −25.74u² + 54.01u + 5.74)             (u = min(1, active/total blocks))
 * pass       = (prefill_ms + decode_ms) / speedup
 * </pre>
 *
 * The decode term applies when the pass decodes at least one token, the prefill term when it
 * computes at least one prompt token (a pass with neither takes no time). Stateless.
 */
public final class MockerTimingModel implements TimingModel {

  private final double speedup;

  /**
   * @param speedup divides every pass time; 1 is the mocker's H100-like profile
   */
  public MockerTimingModel(double speedup) {
    if (!(speedup > 0)) {
      throw new IllegalArgumentException("speedup must be positive, was " + speedup);
    }
    this.speedup = speedup;
  }

  /** Prefill milliseconds for {@code x} uncached tokens (0 for none). */
  public static double prefillMillis(int x) {
    return x <= 0 ? 0 : 4.209989e-7 * x * (double) x + 1.518344e-2 * x + 16.50142;
  }

  /** Decode milliseconds at block utilisation {@code u}. */
  public static double decodeMillis(double u) {
    double v = Math.min(1.0, Math.max(0.0, u));
    return Math.max(1.0, -25.74 * v * v + 54.01 * v + 5.74);
  }

  @Override
  public long passMicros(int prefillTokens, int decodeTokens, int activeBlocks, int totalBlocks) {
    double ms = prefillMillis(prefillTokens);
    if (decodeTokens > 0) {
      ms += decodeMillis((double) activeBlocks / totalBlocks);
    }
    if (ms == 0) {
      return 0;
    }
    return Math.max(1, Math.round(ms * 1000.0 / speedup));
  }
}

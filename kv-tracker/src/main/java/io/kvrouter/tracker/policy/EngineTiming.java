package io.kvrouter.tracker.policy;

/**
 * How long an engine takes to produce a request's first token, in the shape of a chunked-prefill
 * engine's pass time: the prompt tokens to compute before the request's last one (the queue ahead
 * plus its own uncached part) are cut into passes of at most {@code chunk} tokens, and each pass
 * costs
 *
 * <pre>
 *   pass_ms(x) = passMillis + x · perKiloToken / 1e3 + x² · quadratic / 1e7 + decodeScale · decode_ms(u)
 *   decode_ms(u) = max(1, −25.74u² + 54.01u + 5.74)      (only when the replica is decoding)
 * </pre>
 *
 * with {@code u} the replica's KV usage. The shape and the {@link #MOCKER} coefficients are the
 * Dynamo mocker's vLLM pass-time polynomial (ai-dynamo/dynamo {@code lib/mocker/src/perf_model.rs},
 * the default model: prefill {@code 4.209989e-7·x² + 1.518344e-2·x + 16.50142} ms, decode {@code
 * −25.74u² + 54.01u + 5.74} ms), the model the simulated engine runs ({@code
 * io.kvrouter.sim.MockerTimingModel}). Coefficients of a real engine are fitted online by {@link
 * TimingFit} from observed first-token times; the {@link #features} are linear in them.
 *
 * <p>Cost: O(1) per prediction, no allocation. Immutable.
 *
 * @param passMillis fixed cost of one pass (scheduling, sampling, launch), ms
 * @param perKiloToken linear prefill cost, ms per 1,000 tokens
 * @param quadratic quadratic prefill cost (attention), ms per 10^7 tokens²
 * @param decodeScale multiplier of the mocker's decode term per pass
 */
public record EngineTiming(
    double passMillis, double perKiloToken, double quadratic, double decodeScale) {

  /** Number of coefficients (and features). */
  static final int SIZE = 4;

  /** The Dynamo mocker's default model (an H100-like vLLM profile). */
  public static final EngineTiming MOCKER = new EngineTiming(16.50142, 15.18344, 4.209989, 1.0);

  /** The coefficients as an array, in {@link #features} order. */
  double[] toArray() {
    return new double[] {passMillis, perKiloToken, quadratic, decodeScale};
  }

  static EngineTiming of(double[] theta) {
    return new EngineTiming(
        Math.max(0, theta[0]), Math.max(0, theta[1]), Math.max(0, theta[2]), Math.max(0, theta[3]));
  }

  /** The mocker's decode milliseconds per pass at KV usage {@code u}. */
  static double decodeShape(double u) {
    double v = Math.min(1.0, Math.max(0.0, u));
    return Math.max(1.0, -25.74 * v * v + 54.01 * v + 5.74);
  }

  /**
   * Fills {@code out} (length ≥ {@link #SIZE}) with the features of computing {@code tokens} prompt
   * tokens in passes of at most {@code chunk}: passes, thousands of tokens, sum of squared chunk
   * sizes over 10^7, and passes × decode term when the replica is decoding.
   */
  static void features(
      double tokens, double chunk, boolean decoding, double kvUsage, double[] out) {
    double t = Math.max(1, tokens);
    double c = Math.max(1, chunk);
    double passes = Math.ceil(t / c);
    double last = t - (passes - 1) * c;
    out[0] = passes;
    out[1] = t / 1e3;
    out[2] = ((passes - 1) * c * c + last * last) / 1e7;
    out[3] = decoding ? passes * decodeShape(kvUsage) : 0;
  }

  /** Predicted milliseconds for features {@code phi}. */
  double predict(double[] phi) {
    return passMillis * phi[0] + perKiloToken * phi[1] + quadratic * phi[2] + decodeScale * phi[3];
  }

  /**
   * Compute time of {@code tokens} prompt tokens in one pass, without the pass's fixed cost, ms.
   */
  public double computeMillis(double tokens) {
    return perKiloToken * tokens / 1e3 + quadratic * tokens * tokens / 1e7;
  }

  /**
   * Predicted time to first token, ms: {@code ahead} tokens queued before this request plus its own
   * {@code own} uncached tokens, in passes of {@code chunk} tokens.
   */
  public double ttftMillis(
      double ahead, double own, double chunk, boolean decoding, double kvUsage) {
    double t = Math.max(1, ahead + own);
    double c = Math.max(1, chunk);
    double passes = Math.ceil(t / c);
    double last = t - (passes - 1) * c;
    double sq = ((passes - 1) * c * c + last * last) / 1e7;
    double decode = decoding ? passes * decodeShape(kvUsage) : 0;
    return passMillis * passes + perKiloToken * t / 1e3 + quadratic * sq + decodeScale * decode;
  }
}

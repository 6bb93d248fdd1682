package io.kvrouter.tracker.steering;

import io.kvrouter.tracker.ledger.LoadView;

/**
 * The simplest TTFT model that sees queueing: the prompt tokens reserved on the replica and not yet
 * prefilled ({@link LoadView#prefillTokens}, from every ingress's reservations), plus this
 * request's uncached tokens, at a fixed prefill time per token, plus a fixed per-request overhead:
 *
 * <pre>
 *   ttft_ms = baseMillis + millisPerToken · (queuedPrefillTokens + uncachedTokens)
 * </pre>
 *
 * The defaults in {@code reference.conf} ({@code kvrouter.ingress.traffic.slo}) follow the linear
 * and constant terms of the Dynamo mocker's vLLM prefill model (ai-dynamo/dynamo {@code
 * lib/mocker/src/perf_model.rs}: 1.518e-2 ms per token plus 16.5 ms), which is what the simulated
 * engines run; a real deployment measures its engine's prefill rate (vLLM publishes {@code
 * vllm:request_prefill_time_seconds} and {@code vllm:prompt_tokens_total}) and sets them. It
 * ignores decode interference and chunked-prefill scheduling: the ingress exports predicted against
 * observed TTFT so the error is visible. Stateless and immutable.
 */
public final class QueueAheadTtftPredictor implements TtftPredictor {

  private final double baseMillis;
  private final double millisPerToken;

  public QueueAheadTtftPredictor(double baseMillis, double millisPerToken) {
    if (!(baseMillis >= 0) || !(millisPerToken > 0)) {
      throw new IllegalArgumentException(
          "baseMillis must be >= 0 and millisPerToken > 0, were "
              + baseMillis
              + " and "
              + millisPerToken);
    }
    this.baseMillis = baseMillis;
    this.millisPerToken = millisPerToken;
  }

  @Override
  public double ttftMillis(int replica, int uncachedTokens, LoadView load) {
    return baseMillis + millisPerToken * (load.prefillTokens(replica) + (double) uncachedTokens);
  }

  @Override
  public String toString() {
    return "QueueAheadTtftPredictor[base=" + baseMillis + "ms, perToken=" + millisPerToken + "ms]";
  }
}

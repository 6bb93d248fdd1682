package io.kvrouter.ingress.traffic;

import io.kvrouter.ingress.tracing.RequestTrace;

/**
 * What traffic management knows of one request, carried with it through routing, queueing and
 * retries.
 *
 * @param tenant who it belongs to
 * @param priority its priority (lower is more pressing, as vLLM's {@code priority})
 * @param tokens prompt tokens plus {@code max_tokens}: its weight against token limits and its cost
 *     in the fair queue
 * @param ttftTargetMillis its TTFT target from arrival, or 0 for none
 * @param arrivalNanos when it arrived ({@link System#nanoTime()})
 * @param trace its trace
 * @param rank its program's rank in the router queue within its priority and tenant (lower first;
 *     equal ranks go by age): the attained service of its program ({@code program.ProgramLedger})
 */
public record RequestTraffic(
    Tenant tenant,
    int priority,
    long tokens,
    double ttftTargetMillis,
    long arrivalNanos,
    RequestTrace trace,
    double rank) {

  /** A request whose program has no rank (all such go by age). */
  public RequestTraffic(
      Tenant tenant,
      int priority,
      long tokens,
      double ttftTargetMillis,
      long arrivalNanos,
      RequestTrace trace) {
    this(tenant, priority, tokens, ttftTargetMillis, arrivalNanos, trace, 0);
  }

  /** The same request with {@code tokens} and {@code rank}. */
  public RequestTraffic withTokensAndRank(long tokens, double rank) {
    return new RequestTraffic(
        tenant, priority, tokens, ttftTargetMillis, arrivalNanos, trace, rank);
  }

  /** A request of the default tenant at priority 0 without target or trace, arriving now. */
  public static RequestTraffic plain(long tokens) {
    return new RequestTraffic(Tenant.DEFAULT, 0, tokens, 0, System.nanoTime(), RequestTrace.NONE);
  }

  /** Milliseconds since arrival. */
  public double elapsedMillis() {
    return (System.nanoTime() - arrivalNanos) / 1e6;
  }
}

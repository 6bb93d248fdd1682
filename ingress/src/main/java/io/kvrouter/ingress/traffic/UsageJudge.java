package io.kvrouter.ingress.traffic;

import java.util.ArrayList;
import java.util.List;

/**
 * Judges a tenant's waiting requests against its limits in one round of the {@link TenantLimiter}:
 * in arrival order, each is refused when it would take the sliding-window estimate ({@link
 * UsageWindow}) over a limit, otherwise admitted into the round's batch, which is then counted with
 * one write. Plain Java.
 *
 * <p>Rounds of a tenant are judged by its one owner ({@link TenantLimiter}), one after the other,
 * each on counts that include every earlier round: a round may admit up to the limit, never past
 * it, however many ingresses the requests came through.
 */
final class UsageJudge {

  /**
   * The window's length: limits are per minute ({@code requests-per-minute}, {@code
   * tokens-per-minute}), counted per minute and estimated over the last minute.
   */
  static final long WINDOW_MILLIS = 60_000;

  private UsageJudge() {}

  /**
   * The outcome of a round.
   *
   * @param verdicts one per judged request, in order
   * @param admittedRequests requests to count
   * @param admittedTokens tokens to count
   */
  record Round(List<LimitVerdict> verdicts, long admittedRequests, long admittedTokens) {}

  /** What the counters say at the start of the round. */
  record Counts(long requests, long previousRequests, long tokens, long previousTokens) {}

  /**
   * @param tenant the tenant and its limits
   * @param counts its counters in the current and the previous window
   * @param elapsedMillis how far into the current window the round is
   * @param windowMillis the window's length
   * @param tokens each waiting request's token count, in arrival order
   */
  static Round judge(
      Tenant tenant, Counts counts, long elapsedMillis, long windowMillis, List<Long> tokens) {
    long rpm = tenant.requestsPerMinute();
    long tpm = tenant.tokensPerMinute();
    double usedRequests =
        UsageWindow.estimate(
            counts.requests(), counts.previousRequests(), elapsedMillis, windowMillis);
    double usedTokens =
        UsageWindow.estimate(counts.tokens(), counts.previousTokens(), elapsedMillis, windowMillis);
    Frame frame = new Frame(tenant, counts, elapsedMillis, windowMillis);
    List<LimitVerdict> verdicts = new ArrayList<>(tokens.size());
    long batch = 0;
    long batchTokens = 0;
    for (long c : tokens) {
      double r = usedRequests + batch;
      double t = usedTokens + batchTokens;
      boolean overRequests = rpm > 0 && r + 1 > rpm;
      boolean overTokens = !overRequests && tpm > 0 && t + c > tpm;
      if (overRequests || overTokens) {
        verdicts.add(
            frame.verdict(overRequests ? "requests" : "tokens", batch, batchTokens, r, t, c));
        continue;
      }
      batch++;
      batchTokens += c;
      verdicts.add(frame.verdict(null, batch, batchTokens, r + 1, t + c, c));
    }
    return new Round(verdicts, batch, batchTokens);
  }

  /** What a round's verdicts are judged against. */
  private record Frame(Tenant tenant, Counts counts, long elapsedMillis, long windowMillis) {

    /**
     * The verdict of a request of {@code c} tokens: allowed when {@code exceeded} is null, with the
     * round's batch so far and the estimated use with the request ({@code r}, {@code t}) when
     * allowed, without it when refused.
     */
    LimitVerdict verdict(
        String exceeded, long batch, long batchTokens, double r, double t, long c) {
      return new LimitVerdict(
          exceeded == null,
          exceeded,
          tenant.id(),
          standing(
              tenant.requestsPerMinute(),
              counts.requests() + batch,
              counts.previousRequests(),
              r,
              1,
              elapsedMillis,
              windowMillis),
          standing(
              tenant.tokensPerMinute(),
              counts.tokens() + batchTokens,
              counts.previousTokens(),
              t,
              c,
              elapsedMillis,
              windowMillis),
          c);
    }
  }

  /**
   * Where a tenant stands on one limit: {@code used} (this request included when allowed), what
   * remains, and when {@code amount} more fits.
   */
  private static LimitVerdict.Standing standing(
      long limit,
      long current,
      long previous,
      double used,
      long amount,
      long elapsedMillis,
      long windowMillis) {
    if (limit <= 0) {
      return LimitVerdict.Standing.NONE;
    }
    return new LimitVerdict.Standing(
        limit,
        Math.round(used),
        Math.max(0, (long) Math.floor(limit - used)),
        UsageWindow.millisUntilFits(limit, current, previous, amount, elapsedMillis, windowMillis));
  }
}

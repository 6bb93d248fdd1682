package io.kvrouter.ingress.traffic;

import io.kvrouter.ingress.api.ApiError;
import io.kvrouter.protocol.TenantQuotaCommand;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;

/**
 * A tenant's limit check: whether the request may start, and where the tenant stands on each limit,
 * as OpenAI reports it in headers ({@code x-ratelimit-limit-requests}, {@code
 * x-ratelimit-remaining-requests}, {@code x-ratelimit-reset-requests} and the same for tokens; see
 * platform.openai.com/docs/guides/rate-limits, "Rate limits in headers").
 *
 * @param allowed true when the request may start (and has been counted)
 * @param exceeded {@code "requests"} or {@code "tokens"} when refused: the limit that was hit
 * @param tenant the tenant's name
 * @param requests where it stands on requests per minute (limit 0: unlimited)
 * @param tokens where it stands on tokens per minute (limit 0: unlimited)
 * @param requestedTokens the tokens this request counts for
 */
public record LimitVerdict(
    boolean allowed,
    String exceeded,
    String tenant,
    Standing requests,
    Standing tokens,
    long requestedTokens) {

  /**
   * One limit.
   *
   * @param limit the limit per minute, 0 when there is none
   * @param used the estimated use over the last minute, this request included when it was allowed
   * @param remaining what may still start now
   * @param resetMillis how long until this request (when refused) or one more request fits
   */
  public record Standing(long limit, long used, long remaining, long resetMillis) {
    static final Standing NONE = new Standing(0, 0, 0, 0);
  }

  /** The verdict of a tenant's owner, as it crossed the wire. */
  static LimitVerdict fromWire(String tenant, long requestedTokens, TenantQuotaCommand.Verdict v) {
    return new LimitVerdict(
        v.allowed(),
        v.exceeded(),
        tenant,
        fromWire(v.requests()),
        fromWire(v.tokens()),
        requestedTokens);
  }

  /** The verdict as its owner sends it to the asking ingress. */
  TenantQuotaCommand.Verdict toWire() {
    return new TenantQuotaCommand.Verdict(allowed, exceeded, toWire(requests), toWire(tokens));
  }

  private static Standing fromWire(TenantQuotaCommand.Standing s) {
    return new Standing(s.limit(), s.used(), s.remaining(), s.resetMillis());
  }

  private static TenantQuotaCommand.Standing toWire(Standing s) {
    return new TenantQuotaCommand.Standing(s.limit(), s.used(), s.remaining(), s.resetMillis());
  }

  /** A request of a tenant without limits. */
  public static LimitVerdict unlimited(String tenant) {
    return new LimitVerdict(true, null, tenant, Standing.NONE, Standing.NONE, 0);
  }

  /**
   * The 429 for a refused request, worded as OpenAI's: {@code Rate limit reached for ... on
   * requests per min (RPM): Limit 10, Used 10, Requested 1. Please try again in 6s.}, with the
   * limit's kind as the error type (OpenAI answers {@code "type": "requests"} or {@code "tokens"}).
   */
  public ApiError error() {
    boolean byRequests = "requests".equals(exceeded);
    Standing s = byRequests ? requests : tokens;
    long requested = byRequests ? 1 : requestedTokens;
    String unit = byRequests ? "requests per min (RPM)" : "tokens per min (TPM)";
    return new ApiError(
        429,
        "Rate limit reached for tenant '"
            + tenant
            + "' on "
            + unit
            + ": Limit "
            + s.limit()
            + ", Used "
            + s.used()
            + ", Requested "
            + requested
            + ". Please try again in "
            + duration(s.resetMillis())
            + ".",
        byRequests ? "requests" : "tokens",
        null,
        "rate_limit_exceeded",
        (int) Math.max(1, (s.resetMillis() + 999) / 1000));
  }

  /** The {@code x-ratelimit-*} headers of each limit the tenant has. */
  public List<HttpHeader> headers() {
    List<HttpHeader> out = new ArrayList<>(6);
    add(out, "requests", requests);
    add(out, "tokens", tokens);
    return out;
  }

  private static void add(List<HttpHeader> out, String kind, Standing s) {
    if (s.limit() <= 0) {
      return;
    }
    out.add(RawHeader.create("x-ratelimit-limit-" + kind, Long.toString(s.limit())));
    out.add(RawHeader.create("x-ratelimit-remaining-" + kind, Long.toString(s.remaining())));
    out.add(RawHeader.create("x-ratelimit-reset-" + kind, duration(s.resetMillis())));
  }

  /** OpenAI's duration form: {@code 250ms}, {@code 1.5s}, {@code 6m0s}. */
  static String duration(long millis) {
    if (millis < 1000) {
      return Math.max(0, millis) + "ms";
    }
    if (millis < 60_000) {
      String s = java.math.BigDecimal.valueOf(millis, 3).stripTrailingZeros().toPlainString();
      return s + "s";
    }
    long seconds = (millis + 999) / 1000;
    return (seconds / 60) + "m" + (seconds % 60) + "s";
  }
}

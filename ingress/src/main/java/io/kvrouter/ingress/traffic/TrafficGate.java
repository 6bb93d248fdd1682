package io.kvrouter.ingress.traffic;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvrouter.ingress.api.ApiError;
import io.kvrouter.ingress.api.ApiException;
import io.kvrouter.ingress.api.InferenceRequest;
import io.kvrouter.ingress.tracing.RequestTrace;
import java.util.concurrent.CompletionStage;

/**
 * The traffic checks of the request path, in the order the handler makes them: who the request
 * belongs to ({@link #authenticate}, before its body is read), what it asks ({@link #describe}: its
 * priority and TTFT target, from headers or the body, and its session key), and whether its
 * tenant's limits let it start ({@link #acquire}, once its tokens are known). Failures are the
 * OpenAI errors clients expect: 401 for a missing or unknown key, 400 for a malformed priority or
 * target, 429 naming the limit that was hit.
 */
public final class TrafficGate {

  private final TrafficSettings settings;
  private final TenantRegistry tenants;
  private final UsageLimiter limiter;
  private final TrafficMetrics metrics;

  public TrafficGate(
      TrafficSettings settings,
      TenantRegistry tenants,
      UsageLimiter limiter,
      TrafficMetrics metrics) {
    this.settings = settings;
    this.tenants = tenants;
    this.limiter = limiter;
    this.metrics = metrics;
  }

  public TrafficSettings settings() {
    return settings;
  }

  public TenantRegistry tenants() {
    return tenants;
  }

  /**
   * The request's tenant.
   *
   * @throws ApiException 401 when tenants are configured and the key is missing or unknown
   */
  public Tenant authenticate(TrafficHeaders headers) {
    try {
      return tenants.authenticate(headers.apiKey());
    } catch (ApiException e) {
      metrics.unauthorized();
      throw e;
    }
  }

  /**
   * The request with the session header, when present, as its session key (it overrides what the
   * body says: Anthropic {@code metadata.user_id}, OpenAI {@code prompt_cache_key} or {@code
   * user}).
   */
  public InferenceRequest withSession(TrafficHeaders headers, InferenceRequest request) {
    if (!settings.sessions().enabled()) {
      return request.sessionKey() == null ? request : request.withSessionKey(null);
    }
    return headers.session() == null ? request : request.withSessionKey(headers.session());
  }

  /**
   * What traffic management knows of the request: its priority (header, else the body's {@code
   * priority}, else the tenant's, else the default), its tokens and its TTFT target.
   *
   * @throws ApiException 400 for a priority or target that is not an integer (or a target that is
   *     not positive)
   */
  public RequestTraffic describe(
      TrafficHeaders headers,
      InferenceRequest request,
      Tenant tenant,
      int promptTokens,
      long arrivalNanos,
      RequestTrace trace) {
    Integer priority = headerInt(headers.priority(), settings.priorityHeader(), false);
    if (priority == null) {
      priority = bodyPriority(request);
    }
    if (priority == null) {
      priority = tenant.priority() != null ? tenant.priority() : settings.defaultPriority();
    }
    Integer target = headerInt(headers.ttftTarget(), settings.ttftHeader(), true);
    return new RequestTraffic(
        tenant,
        priority,
        promptTokens + (long) Math.max(0, request.maxTokens()),
        target == null ? 0 : target,
        arrivalNanos,
        trace);
  }

  /** Counts the request against its tenant's limits. */
  public CompletionStage<LimitVerdict> acquire(RequestTraffic traffic) {
    return limiter
        .acquire(traffic.tenant(), traffic.tokens())
        .thenApply(
            v -> {
              if (v.allowed()) {
                metrics.admitted(traffic.tenant().id());
              } else {
                metrics.rateLimited(v.tenant(), v.exceeded());
              }
              return v;
            });
  }

  /** vLLM's {@code priority} field, when the body has one (it is forwarded as it is). */
  private static Integer bodyPriority(InferenceRequest request) {
    JsonNode body = request.nativeBody() != null ? request.nativeBody() : request.engineBody();
    JsonNode p = body == null ? null : body.get("priority");
    if (p == null || p.isNull()) {
      return null;
    }
    if (!p.isIntegralNumber() || !p.canConvertToInt()) {
      throw new ApiException(
          ApiError.invalid(
              "priority: Input should be a valid integer", "priority", "invalid_type"));
    }
    return p.intValue();
  }

  private static Integer headerInt(String value, String header, boolean positive) {
    if (value == null) {
      return null;
    }
    try {
      int v = Integer.parseInt(value);
      if (positive && v <= 0) {
        throw new NumberFormatException();
      }
      return v;
    } catch (NumberFormatException e) {
      throw new ApiException(
          ApiError.invalid(
              "The "
                  + header
                  + " header must be "
                  + (positive ? "a positive integer (milliseconds)" : "an integer")
                  + ", was '"
                  + value
                  + "'.",
              null,
              "invalid_header"));
    }
  }
}

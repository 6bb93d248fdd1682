package io.kvrouter.ingress.traffic;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** Counts a tenant's requests and tokens against its per-minute limits. */
public interface UsageLimiter {

  /**
   * Counts one request of {@code tokens} tokens for {@code tenant} if it fits its limits; the
   * verdict says whether it did and where the tenant stands. Never fails: when the count cannot be
   * made the request is allowed (a limiter outage must not become a service outage).
   */
  CompletionStage<LimitVerdict> acquire(Tenant tenant, long tokens);

  /** No limits anywhere. */
  UsageLimiter UNLIMITED =
      (tenant, tokens) -> CompletableFuture.completedFuture(LimitVerdict.unlimited(tenant.id()));
}

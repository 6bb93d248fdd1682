package io.kvrouter.ingress.traffic;

/**
 * A tenant: who a request is billed to, what it may use and how it shares the router queue.
 *
 * @param id the tenant's name (metrics, error messages)
 * @param requestsPerMinute requests it may start per minute across the cluster; 0: unlimited
 * @param tokensPerMinute tokens (prompt plus {@code max_tokens}) per minute; 0: unlimited
 * @param weight its share in the fair queue, relative to other tenants (1 is equal)
 * @param priority priority of its requests when they state none (lower is more pressing)
 */
public record Tenant(
    String id, long requestsPerMinute, long tokensPerMinute, double weight, Integer priority) {

  /** Everybody when no tenants are configured: no limits. */
  public static final Tenant DEFAULT = new Tenant("default", 0, 0, 1, null);

  public Tenant {
    if (id == null || id.isBlank()) {
      throw new IllegalArgumentException("a tenant needs a name");
    }
    if (requestsPerMinute < 0 || tokensPerMinute < 0 || !(weight > 0)) {
      throw new IllegalArgumentException("tenant " + id + ": limits must be >= 0 and weight > 0");
    }
  }

  /** True when a limit applies. */
  public boolean limited() {
    return requestsPerMinute > 0 || tokensPerMinute > 0;
  }
}

package io.kvrouter.protocol;

import org.apache.pekko.actor.typed.ActorRef;

/**
 * Messages of a tenant's quota owner: one Cluster Sharding entity per limited tenant, hosted by one
 * ingress, decides every admission of that tenant in sequence, whichever ingress the request
 * reached. Not sealed: the owner's own internal messages share the type and never cross the wire.
 */
public interface TenantQuotaCommand extends KryoWire {

  /**
   * Count one request of {@code tokens} tokens if it fits the tenant's limits (the asking ingress's
   * view of them: a reloaded tenants file takes effect with the next request).
   *
   * @param requestsPerMinute 0: unlimited
   * @param tokensPerMinute 0: unlimited
   */
  record Acquire(
      String tenant,
      long requestsPerMinute,
      long tokensPerMinute,
      long tokens,
      ActorRef<Verdict> replyTo)
      implements TenantQuotaCommand {}

  /**
   * The owner's answer.
   *
   * @param allowed true when counted and the request may start
   * @param exceeded {@code "requests"} or {@code "tokens"} when refused
   */
  record Verdict(boolean allowed, String exceeded, Standing requests, Standing tokens)
      implements KryoWire {}

  /**
   * Where the tenant stands on one limit (limit 0: none).
   *
   * @param used estimated use over the last minute, the request included when allowed
   * @param remaining what may still start now
   * @param resetMillis until the refused request (or one more) fits
   */
  record Standing(long limit, long used, long remaining, long resetMillis) implements KryoWire {}
}

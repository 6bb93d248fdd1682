package io.kvrouter.tracker;

import io.kvrouter.tracker.policy.Policies;
import io.kvrouter.tracker.policy.PolicyConfig;
import java.util.Objects;

/**
 * Settings of one tracker instance.
 *
 * @param ingressId this node's ingress id: the origin stamped on its reservation events
 * @param policy policy name (see {@link Policies#names()})
 * @param policyConfig policy parameters
 * @param seed seed of the policy's random generator (mixed with the ingress id, so two ingresses
 *     with the same seed still draw different tie-breaks)
 * @param leaseMillis how long a reservation holds if never released
 * @param predictedTtlMillis how long a predicted entry lives on a replica that publishes KV events
 *     (its own event should confirm it well before)
 * @param approximateTtlMillis how long a predicted entry lives on a replica without KV events,
 *     where predicted entries are the whole index (Dynamo's ApproxKvIndexer uses 120 s)
 * @param expectedBlocks index nodes to size for up front
 */
public record TrackerConfig(
    String ingressId,
    String policy,
    PolicyConfig policyConfig,
    long seed,
    long leaseMillis,
    long predictedTtlMillis,
    long approximateTtlMillis,
    int expectedBlocks) {

  public TrackerConfig {
    Objects.requireNonNull(ingressId, "ingressId");
    Objects.requireNonNull(policy, "policy");
    Objects.requireNonNull(policyConfig, "policyConfig");
    if (leaseMillis <= 0 || predictedTtlMillis <= 0 || approximateTtlMillis <= 0) {
      throw new IllegalArgumentException("lease and TTLs must be positive");
    }
  }

  /** Defaults: policy {@code kvrouter}, lease 10 min, predicted TTL 30 s, approximate 120 s. */
  public static TrackerConfig defaults(String ingressId) {
    return new TrackerConfig(
        ingressId,
        Policies.DEFAULT,
        PolicyConfig.defaults(),
        0x5eedL,
        600_000,
        30_000,
        120_000,
        1 << 16);
  }

  public TrackerConfig withPolicy(String name) {
    return new TrackerConfig(
        ingressId,
        name,
        policyConfig,
        seed,
        leaseMillis,
        predictedTtlMillis,
        approximateTtlMillis,
        expectedBlocks);
  }

  public TrackerConfig withPolicyConfig(PolicyConfig c) {
    return new TrackerConfig(
        ingressId,
        policy,
        c,
        seed,
        leaseMillis,
        predictedTtlMillis,
        approximateTtlMillis,
        expectedBlocks);
  }

  public TrackerConfig withExpectedBlocks(int blocks) {
    return new TrackerConfig(
        ingressId,
        policy,
        policyConfig,
        seed,
        leaseMillis,
        predictedTtlMillis,
        approximateTtlMillis,
        blocks);
  }

  /** The same with another lease and other predicted-entry TTLs, all in milliseconds. */
  public TrackerConfig withLeaseAndTtls(long lease, long predictedTtl, long approximateTtl) {
    return new TrackerConfig(
        ingressId, policy, policyConfig, seed, lease, predictedTtl, approximateTtl, expectedBlocks);
  }
}

package io.kvrouter.tracker.policy;

import java.util.List;
import java.util.random.RandomGenerator;

/**
 * Creates policies by name; {@link Policies} finds providers with {@link java.util.ServiceLoader}
 * (a {@code META-INF/services/io.kvrouter.tracker.policy.PolicyProvider} entry). The tracker ships
 * the kvrouter policy's; the lab adds the peer baselines it judges against, so a node built without
 * the lab knows kvrouter alone.
 */
public interface PolicyProvider {

  /** The names this provider creates: those a listing shows first, then variants. */
  List<String> names();

  /**
   * A new policy (each keeps its own state) for {@code settings}, whose {@link
   * PolicySettings#baseName()} is one of {@link #names()}.
   *
   * @param busy the tracker's busy rule, which a policy may rank by
   * @param random the only source of randomness the policy may use; seed it for reproducible runs
   */
  Policy create(PolicySettings settings, BusyThresholds busy, RandomGenerator random);
}

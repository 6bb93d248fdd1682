package io.kvrouter.tracker.policy;

import java.util.List;
import java.util.random.RandomGenerator;

/** Creates kvrouter's policy ({@link KvRouterPolicy}); it draws no randomness. */
final class KvRouterPolicyProvider implements PolicyProvider {

  /** The policy's name. */
  static final String NAME = "kvrouter";

  @Override
  public List<String> names() {
    return List.of(NAME);
  }

  @Override
  public Policy create(PolicySettings settings, BusyThresholds busy, RandomGenerator random) {
    return new KvRouterPolicy(settings, busy);
  }
}

package io.kvrouter.loadtest.baselines;

import io.kvrouter.tracker.policy.Fixture;
import io.kvrouter.tracker.policy.Policy;

/** Routers of one policy joined on the peer's own channel, as the lab builds a run's routers. */
final class PeerRouters {

  private PeerRouters() {}

  /**
   * {@code count} routers of {@code policy} in one {@link PeerGroup}, seeded 1, 2, ..., with {@code
   * delayMicros} between them.
   */
  static Policy[] of(String policy, int count, long delayMicros) {
    Policy[] routers = new Policy[count];
    try (PeerGroup group = PeerGroup.open(delayMicros)) {
      for (int i = 0; i < count; i++) {
        routers[i] = Fixture.policy(policy, i + 1);
      }
    }
    return routers;
  }
}

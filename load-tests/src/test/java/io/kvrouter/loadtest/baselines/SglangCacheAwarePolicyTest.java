package io.kvrouter.loadtest.baselines;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.Tier;
import io.kvrouter.tracker.policy.Fixture;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.Visibility;
import org.junit.jupiter.api.Test;

class SglangCacheAwarePolicyTest {

  /**
   * The engine index says replica 2 holds the prompt, but SMG never sees engine events: its own
   * tree is empty, so the miss goes to the least-loaded worker (fewest in flight, then fewest
   * routed, then list order: replica 0), where kvrouter follows the cache to replica 2.
   */
  @Test
  void aMissOnItsOwnTree_goesToTheLeastLoadedWorker_notWhereTheEngineCachedThePrompt() {
    Fixture f = new Fixture(3);
    long[] prompt = Fixture.prompt(500, 8);
    f.cache(2, prompt, 8, Tier.GPU);
    Policy p = Fixture.policy("sglang_cache_aware", 1);

    assertThat(f.rank(p, prompt)[0]).isEqualTo(0);
    assertThat(f.kvrouterPick(prompt)).isEqualTo(2);
  }

  @Test
  void aMiss_goesToTheLeastLoadedWorker_notTheSmallestTree() {
    Fixture f = new Fixture(2);
    Policy p = Fixture.policy("sglang_cache_aware", 1);
    assertThat(f.route(p, Fixture.prompt(10, 20))).isEqualTo(0); // replica 0's tree: 20 blocks
    f.inFlight[1] = 1; // replica 1: empty tree, one in flight
    // the old sgl-router sent a miss to the smallest tree (1); SMG sends it to the least loaded
    assertThat(f.route(p, Fixture.prompt(9_000, 4))).isEqualTo(0);
  }

  @Test
  void leastLoadedTies_goToTheWorkerThisGatewayRoutedFewestRequestsTo() {
    Fixture f = new Fixture(3);
    Policy p = Fixture.policy("sglang_cache_aware", 1);
    int[] picks = new int[3];
    for (int i = 0; i < 3; i++) {
      picks[i] = f.route(p, Fixture.prompt(1_000_000L * (i + 1), 4)); // misses, nothing in flight
    }
    assertThat(picks).containsExactly(0, 1, 2);
  }

  @Test
  void aMatchAboveThirtyPercent_followsTheTree_unlessLoadsDifferByMoreThan64AndHalf() {
    Fixture f = new Fixture(2);
    Policy p = Fixture.policy("sglang_cache_aware", 1);
    long[] prompt = Fixture.prompt(10, 8);
    f.inFlight[0] = 1; // the first request goes to replica 1
    int home = f.route(p, prompt);
    assertThat(home).isEqualTo(1);
    f.inFlight[0] = 0;
    f.inFlight[1] = 64; // 64 - 0 is not above 64: the tree wins
    assertThat(f.rank(p, prompt)[0]).isEqualTo(1);
    f.inFlight[1] = 65; // above 64, and above 1.5 x 0
    assertThat(f.rank(p, prompt)[0]).isEqualTo(0);
    f.inFlight[0] = 44; // 65 - 44 = 21: balanced again
    assertThat(f.rank(p, prompt)[0]).isEqualTo(1);

    long[] mostlyNew = Fixture.prompt(10, 30); // 8 of 30 blocks matched: 0.27, a miss
    f.inFlight[0] = 0;
    f.inFlight[1] = 1;
    assertThat(f.rank(p, mostlyNew)[0]).isEqualTo(0);
  }

  @Test
  void sees_onlyItsOwnInFlightRequests() {
    assertThat(Fixture.policy("sglang_cache_aware", 1).visibility())
        .isEqualTo(Visibility.OWN_REQUESTS);
  }
}

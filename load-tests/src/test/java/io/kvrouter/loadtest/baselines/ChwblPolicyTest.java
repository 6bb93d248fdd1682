package io.kvrouter.loadtest.baselines;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.tracker.policy.Fixture;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.Visibility;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ChwblPolicyTest {

  private static int home(Fixture f, Policy p, long[] prompt) {
    java.util.Arrays.fill(f.inFlight, 0);
    return f.rank(p, prompt)[0];
  }

  /**
   * KubeAI accepts a replica whose own in-flight count is at most {@code (total + 1) / n × 1.25},
   * here exactly 1.0 with 3 in flight over 5 replicas, so the home replica with one request keeps
   * the prefix even though its request is still in prefill; kvrouter sees that queued prefill and
   * picks an idle replica. (The old baseline rounded the bound up and counted the new request: 1 +
   * 1 > ceil(1.0), so it moved on too.)
   */
  @Test
  void keepsTheHomeReplica_whenItsLoadEqualsTheUnroundedBound() {
    Fixture f = new Fixture(5);
    Policy p = Fixture.policy("chwbl", 1);
    long[] prompt = Fixture.prompt(77, 6);
    int home = home(f, p, prompt);
    f.inFlight[home] = 1;
    f.prefill[home] = 2_000;
    int others = 0;
    for (int r = 0; r < 5 && others < 2; r++) {
      if (r != home) {
        f.inFlight[r] = 1;
        others++;
      }
    }

    assertThat(f.rank(p, prompt)[0]).isEqualTo(home);
    assertThat(f.kvrouterPick(prompt)).isNotEqualTo(home);

    f.inFlight[home] = 2; // total 4: bound 1.25 < 2
    assertThat(f.rank(p, prompt)[0]).isNotEqualTo(home);
  }

  @Test
  void keysOnTheFirstTwoBlocks_aboutTheFirst100Characters() {
    Fixture f = new Fixture(8);
    Policy p = Fixture.policy("chwbl", 1);
    long[] prompt = Fixture.prompt(5_000, 6);
    int home = home(f, p, prompt);
    long[] sameStart = prompt.clone();
    sameStart[2] = 123_456; // differs after 32 tokens
    assertThat(home(f, p, sameStart)).isEqualTo(home);
    Set<Integer> homes = new HashSet<>();
    for (int i = 0; i < 64; i++) {
      long[] other = prompt.clone();
      other[1] = 1_000_000L + i; // differs within the first 32 tokens
      homes.add(home(f, p, other));
    }
    assertThat(homes).hasSizeGreaterThan(4);
  }

  /**
   * KubeAI places endpoint {@code name}'s i-th point at {@code xxhash64(name + i)}, seed 0
   * (cespare/xxhash {@code Sum64}); reference values from an independent XXH64 implementation
   * checked against the published test vectors (empty input {@code 0xEF46DB3751D8E999}, "abc"
   * {@code 0x44BC2CF5AD770999}).
   */
  @Test
  void ringPoints_areXxhash64OfNameAndIndex_256PerReplica() {
    assertThat(BaselineSettings.SHIPPED.chwblVirtualNodes()).isEqualTo(256);
    assertThat(ChwblPolicy.hash("")).isEqualTo(0xEF46DB3751D8E999L);
    assertThat(ChwblPolicy.hash("abc")).isEqualTo(0x44BC2CF5AD770999L);
    assertThat(ChwblPolicy.hash("r00")).isEqualTo(250549240024642080L);
    assertThat(ChwblPolicy.hash("r0255")).isEqualTo(3554774432047646911L);
  }

  @Test
  void loadOk_isKubeAisBound() {
    assertThat(ChwblPolicy.loadOk(5, 0, 4, 1.25)).isTrue(); // nothing in flight: anyone
    assertThat(ChwblPolicy.loadOk(1, 3, 5, 1.25)).isTrue(); // 4 / 5 * 1.25 = 1.0
    assertThat(ChwblPolicy.loadOk(2, 3, 5, 1.25)).isFalse();
    assertThat(ChwblPolicy.loadOk(3, 9, 4, 1.25)).isTrue(); // 3.125
    assertThat(ChwblPolicy.loadOk(4, 9, 4, 1.25)).isFalse();
  }

  @Test
  void sees_onlyItsOwnInFlightRequests() {
    assertThat(Fixture.policy("chwbl", 1).visibility()).isEqualTo(Visibility.OWN_REQUESTS);
  }
}

package io.kvrouter.tracker.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvrouter.protocol.Tier;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PoliciesTest {

  @Test
  void names_listEveryPolicyWithTheDefaultFirst_andEachCanBeCreated() {
    assertThat(Policies.names())
        .containsExactly(
            "kvrouter",
            "round_robin",
            "random",
            "least_loaded",
            "chwbl",
            "sglang_cache_aware",
            "tgi_trie",
            "dynamo_kv",
            "llmd_precise",
            "preble_e2");
    for (String name : Policies.names()) {
      assertThat(Fixture.policy(name, 1).name()).isEqualTo(name);
    }
    assertThatThrownBy(() -> Fixture.policy("nope", 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("kvrouter");
  }

  @Test
  void everyPolicy_returnsAPermutationOfTheCandidates() {
    Fixture f = new Fixture(5);
    f.cache(2, Fixture.prompt(100, 8), 8, Tier.GPU);
    for (String name : Policies.names()) {
      int[] ranked = f.rank(Fixture.policy(name, 3), Fixture.prompt(100, 8));
      assertThat(ranked).as(name).containsExactlyInAnyOrder(0, 1, 2, 3, 4);
    }
  }

  @Test
  void sameSeed_sameChoices() {
    for (String name : Policies.names()) {
      Fixture a = new Fixture(6);
      Fixture b = new Fixture(6);
      Policy pa = Fixture.policy(name, 42);
      Policy pb = Fixture.policy(name, 42);
      for (int i = 0; i < 30; i++) {
        long[] prompt = Fixture.prompt(1000L * (i % 7 + 1), 4);
        assertThat(a.route(pa, prompt)).as(name).isEqualTo(b.route(pb, prompt));
      }
    }
  }

  @Test
  void roundRobin_cyclesThroughReplicas() {
    Fixture f = new Fixture(3);
    Policy p = Fixture.policy("round_robin", 1);
    int[] picks = new int[6];
    for (int i = 0; i < 6; i++) {
      picks[i] = f.route(p, Fixture.prompt(1, 2));
    }
    assertThat(picks).containsExactly(0, 1, 2, 0, 1, 2);
  }

  @Test
  void random_spreadsOverAllReplicas() {
    Fixture f = new Fixture(4);
    Policy p = Fixture.policy("random", 7);
    Set<Integer> seen = new HashSet<>();
    for (int i = 0; i < 200; i++) {
      seen.add(f.route(p, Fixture.prompt(1, 2)));
    }
    assertThat(seen).containsExactlyInAnyOrder(0, 1, 2, 3);
  }

  @Test
  void leastLoaded_picksFewestInFlight_evenAgainstCache() {
    Fixture f = new Fixture(3);
    f.inFlight[0] = 5;
    f.inFlight[1] = 1;
    f.inFlight[2] = 3;
    f.cache(0, Fixture.prompt(1, 4), 4, Tier.GPU);
    assertThat(f.rank(Fixture.policy("least_loaded", 1), Fixture.prompt(1, 4)))
        .containsExactly(1, 2, 0);
  }

  @Test
  void chwbl_samePrefixSameReplica_untilItsLoadPassesTheBound() {
    Fixture f = new Fixture(4);
    Policy p = Fixture.policy("chwbl", 1);
    long[] prompt = Fixture.prompt(77, 6);
    int home = f.rank(p, prompt)[0];
    for (int i = 0; i < 5; i++) {
      assertThat(f.rank(p, Fixture.prompt(77, 6 + i))[0]).isEqualTo(home); // same first blocks
    }
    // bound = ceil(1.25 * (total + 1) / 4); with home at 3 and others 0: ceil(1.25) = 2 < 4
    f.inFlight[home] = 3;
    assertThat(f.rank(p, prompt)[0]).isNotEqualTo(home);
    f.inFlight[home] = 0;
    assertThat(f.rank(p, prompt)[0]).isEqualTo(home);
  }

  @Test
  void chwbl_spreadsDifferentPrefixes() {
    Fixture f = new Fixture(4);
    Policy p = Fixture.policy("chwbl", 1);
    Set<Integer> homes = new HashSet<>();
    for (int i = 0; i < 64; i++) {
      homes.add(f.rank(p, Fixture.prompt(1_000_000L * (i + 1), 4))[0]);
    }
    assertThat(homes).hasSize(4);
  }

  @Test
  void sglang_followsItsOwnApproximateTree_notTheEngineIndex() {
    Fixture f = new Fixture(3);
    Policy p = Fixture.policy("sglang_cache_aware", 1);
    long[] prompt = Fixture.prompt(500, 8);
    f.cache(2, prompt, 8, Tier.GPU); // engine truth: replica 2; sglang never sees it
    int first = f.route(p, prompt); // all trees empty: smallest tree (random among equals)
    for (int i = 0; i < 5; i++) {
      assertThat(f.route(p, prompt)).isEqualTo(first); // match rate 1.0 > 0.3 on its own tree
    }
  }

  @Test
  void sglang_lowMatch_goesToSmallestTree() {
    Fixture f = new Fixture(2);
    Policy p = Fixture.policy("sglang_cache_aware", 1);
    int a = f.route(p, Fixture.prompt(10, 20)); // one tree now holds 20 blocks
    int b = f.route(p, Fixture.prompt(9_000, 4)); // no match anywhere: smallest tree
    assertThat(b).isNotEqualTo(a);
  }

  @Test
  void sglang_imbalance_overridesCache() {
    Fixture f = new Fixture(2);
    Policy p = Fixture.policy("sglang_cache_aware", 1);
    long[] prompt = Fixture.prompt(10, 8);
    int home = f.route(p, prompt);
    int other = 1 - home;
    f.inFlight[home] = 40;
    f.inFlight[other] = 5; // 40 - 5 > 32 and 40 > 1.5 * 5
    assertThat(f.rank(p, prompt)[0]).isEqualTo(other);
    f.inFlight[home] = 30; // 25 <= 32: not imbalanced, cache wins
    assertThat(f.rank(p, prompt)[0]).isEqualTo(home);
  }

  @Test
  void tgiTrie_promptsSharingAPrefixLandTogether_unrelatedOnesSpread() {
    Fixture f = new Fixture(4);
    Policy p = Fixture.policy("tgi_trie", 1);
    int home = f.route(p, Fixture.prompt(5_000, 6));
    long[] sibling = Fixture.prompt(5_000, 6);
    sibling[4] = 999_999; // shares four leading blocks
    assertThat(f.route(p, sibling)).isEqualTo(home);
    f.inFlight[home] = 1_000; // no load term
    assertThat(f.route(p, Fixture.prompt(5_000, 3))).isEqualTo(home);
    Set<Integer> spread = new HashSet<>();
    for (int i = 0; i < 64; i++) {
      spread.add(f.route(p, new long[] {0x9E3779B97F4A7C15L * (i + 1), 1, 2}));
    }
    assertThat(spread).hasSize(4);
  }

  @Test
  void dynamo_minimisesOverlapWeightedPrefillPlusDecodeBlocks() {
    Fixture f = new Fixture(3);
    long[] prompt = Fixture.prompt(1, 10);
    f.cache(0, prompt, 10, Tier.GPU);
    f.cache(1, prompt, 4, Tier.GPU);
    Policy p = Fixture.policy("dynamo_kv", 1);
    // costs: r0 = 0 + 10, r1 = 6 + 10, r2 = 10 + 10 (decode blocks = active + prompt)
    assertThat(f.rank(p, prompt)).containsExactly(0, 1, 2);
    f.decode[0] = 7 * Fixture.BS; // r0 = 0 + 17 > r1 = 16
    assertThat(f.rank(p, prompt)).containsExactly(1, 0, 2);
  }

  @Test
  void dynamo_givesCpuAndDiskBlocksTierCredit() {
    Fixture f = new Fixture(3);
    long[] prompt = Fixture.prompt(1, 8);
    f.cache(0, prompt, 8, Tier.DISK);
    f.cache(1, prompt, 8, Tier.CPU);
    assertThat(f.rank(Fixture.policy("dynamo_kv", 1), prompt)).containsExactly(1, 0, 2);
  }

  @Test
  void llmd_weighsPrefixTwiceAsMuchAsKvAndQueue() {
    Fixture f = new Fixture(3);
    long[] prompt = Fixture.prompt(1, 10);
    f.cache(0, prompt, 10, Tier.GPU); // prefix 1.0 -> 2.0
    f.kv[0] = 0.9; // kv 0.1
    f.waiting[0] = 10; // queue 0
    // r0 = 2.0 + 0.1 + 0 = 2.1 ; r1 = 0 + 1 + 1 = 2.0 ; r2 = 0 + 0.5 + 1 = 1.5
    f.kv[2] = 0.5;
    assertThat(f.rank(Fixture.policy("llmd_precise", 1), prompt)).containsExactly(0, 1, 2);
    f.kv[0] = 1.0; // r0 = 2.0, ties with r1 at random: r2 last either way
    assertThat(f.rank(Fixture.policy("llmd_precise", 1), prompt)[2]).isEqualTo(2);
    f.waiting[1] = 5; // r1 queue 0.5 -> 1.5; r0 = 2.0 first
    assertThat(f.rank(Fixture.policy("llmd_precise", 1), prompt)[0]).isEqualTo(0);
  }

  @Test
  void preble_exploitsLongCachedPrefix_onLeastLoadedHolder() {
    Fixture f = new Fixture(3);
    long[] prompt = Fixture.prompt(1, 10);
    f.cache(0, prompt, 8, Tier.GPU);
    f.cache(1, prompt, 8, Tier.GPU);
    f.decode[0] = 10_000;
    f.decode[1] = 100;
    Policy p = Fixture.policy("preble_e2", 1);
    assertThat(f.rank(p, prompt)[0]).isEqualTo(1); // 8 cached > 2 uncached: exploit; r1 less loaded
  }

  @Test
  void preble_exploresByWindowedMissLoad_whenCachedPartIsShort() {
    Fixture f = new Fixture(2);
    Policy p = Fixture.policy("preble_e2", 1);
    long[] big = Fixture.prompt(1, 100);
    int first = f.route(p, big); // miss of 1600 tokens recorded on it
    long[] other = Fixture.prompt(10_000, 10);
    assertThat(f.route(p, other)).isEqualTo(1 - first);
    f.now += 200_000; // window (180 s) passed: history forgotten
    Map<Integer, Integer> counts = new HashMap<>();
    for (int i = 0; i < 40; i++) {
      counts.merge(f.rank(p, Fixture.prompt(20_000, 1))[0], 1, Integer::sum);
    }
    assertThat(counts.keySet()).hasSize(2); // equal loads again: ties at random
  }
}

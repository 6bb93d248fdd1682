package io.kvrouter.loadtest.baselines;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.Tier;
import io.kvrouter.tracker.policy.Fixture;
import io.kvrouter.tracker.policy.Policies;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.Visibility;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BaselinePoliciesTest {

  private static final List<String> ALL =
      List.of(
          "kvrouter",
          "round_robin",
          "random",
          "least_loaded",
          "chwbl",
          "sglang_cache_aware",
          "tgi_trie",
          "dynamo_kv",
          "llmd_precise",
          "preble_e2",
          "vllm_router_kv");

  @Test
  void theLab_registersEveryBaselineAfterKvrouter_andEachCanBeCreated() {
    assertThat(Policies.names()).startsWith(ALL.toArray(String[]::new));
    assertThat(BaselinePolicies.defaults()).containsExactlyElementsOf(ALL.subList(1, ALL.size()));
    for (String name : ALL) {
      assertThat(Fixture.policy(name, 1).name()).isEqualTo(name);
    }
  }

  @Test
  void everyPolicy_returnsAPermutationOfTheCandidates() {
    Fixture f = new Fixture(5);
    f.cache(2, Fixture.prompt(100, 8), 8, Tier.GPU);
    for (String name : ALL) {
      int[] ranked = f.rank(Fixture.policy(name, 3), Fixture.prompt(100, 8));
      assertThat(ranked).as(name).containsExactlyInAnyOrder(0, 1, 2, 3, 4);
    }
  }

  @Test
  void sameSeed_sameChoices() {
    for (String name : ALL) {
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
  void variants_areCreatedByNameButNotRunByDefault() {
    assertThat(BaselinePolicies.variants()).contains("dynamo_kv_w2", "dynamo_kv_decode");
    assertThat(BaselinePolicies.defaults()).doesNotContain("dynamo_kv_w2", "dynamo_kv_decode");
    assertThat(Policies.known("dynamo_kv_w2")).isTrue();
    assertThat(Fixture.policy("dynamo_kv_w2", 1).name()).isEqualTo("dynamo_kv_w2");
    assertThat(Fixture.policy("dynamo_kv_decode", 1).name()).isEqualTo("dynamo_kv_decode");
  }

  @Test
  void onlyKvrouter_seesThePeersReservationsAndPredictedBlocks() {
    for (String name : ALL) {
      Visibility v = Policies.visibility(name);
      boolean ours = name.equals("kvrouter");
      assertThat(v.peerReservations()).as(name).isEqualTo(ours);
      assertThat(v.predictedBlocks()).as(name).isEqualTo(ours);
    }
    assertThat(Policies.visibility("llmd_precise").metricsIntervalMillis()).isEqualTo(50);
    assertThat(Policies.visibility("preble_e2").globalScheduler()).isTrue();
    assertThat(Policies.visibility("llmd_precise").globalScheduler()).isTrue();
    assertThat(Policies.visibility("dynamo_kv").globalScheduler()).isFalse();
  }
}

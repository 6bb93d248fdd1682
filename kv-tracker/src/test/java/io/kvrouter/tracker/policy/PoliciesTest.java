package io.kvrouter.tracker.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvrouter.protocol.Tier;
import java.util.HashSet;
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
  void variants_areCreatedByNameButNotRunByDefault() {
    assertThat(Policies.variants()).contains("dynamo_kv_w2", "kvrouter_v1", "kvrouter_turns");
    assertThat(Policies.names()).doesNotContain("dynamo_kv_w2");
    assertThat(Policies.known("dynamo_kv_w2")).isTrue();
    assertThat(Policies.known("nope")).isFalse();
    assertThat(Fixture.policy("dynamo_kv_w2", 1).name()).isEqualTo("dynamo_kv_w2");
  }

  @Test
  void onlyKvrouter_seesThePeersReservationsAndPredictedBlocks() {
    for (String name : Policies.names()) {
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

  /**
   * A tuned variant runs kvrouter with the named parameter changed: with work weight 0 the 6,000
   * tokens queued ahead of the cached replica (about 123 ms) lose to recomputing the prompt on the
   * idle one (about 86 ms), which the default's work term (about 155 ms) does not.
   */
  @Test
  void tunedVariant_runsKvrouterWithTheNamedParameterChanged() {
    Fixture f = new Fixture(2);
    long[] prompt = Fixture.prompt(1, 256);
    f.cache(0, prompt, 256, Tier.GPU);
    f.prefill[0] = 6_000;
    assertThat(f.rank(Fixture.policy("kvrouter", 1), prompt)[0]).isEqualTo(0);
    Policy tuned = Fixture.policy("kvrouter@workWeight=0", 1);
    assertThat(tuned.name()).isEqualTo("kvrouter@workWeight=0");
    assertThat(f.rank(tuned, prompt)[0]).isEqualTo(1);
    assertThat(Policies.known("kvrouter@workWeight=0@tieMillis=20")).isTrue();
    assertThat(Policies.names()).noneMatch(n -> n.startsWith(Policies.TUNED));
  }

  @Test
  void tunedSettings_changeOnlyWhatTheyName_andRejectWhatDoesNotParse() {
    KvRouterConfig d = KvRouterConfig.defaults();
    KvRouterConfig t = d.with("workWeight=1.5@tieMillis=20@fitTiming=false@concurrency=off");
    assertThat(t)
        .isEqualTo(
            new KvRouterConfig(
                d.chunkTokens(),
                false,
                d.fitForgetting(),
                "off",
                1.5,
                20,
                d.tieRelative(),
                d.rotationMillis(),
                d.horizonMillis(),
                d.maxDelayMillis(),
                d.workShare(),
                d.stripe(),
                d.strictFirst(),
                d.delayPriorMillis(),
                d.unseenBand(),
                d.prefillProgress(),
                d.blindMillis(),
                d.holdFromMillis(),
                d.holdClasses(),
                d.holdStep(),
                d.holdMaxMillis(),
                d.sessionShare(),
                d.soloHoldMillis(),
                d.burstHoldFromMillis(),
                d.burstHoldStep(),
                d.burstConcurrency(),
                d.coldLeadFromMillis(),
                d.coldLookMillis(),
                d.coldFollowShare(),
                d.intents(),
                d.intentsFromMillis(),
                d.lagFromMillis(),
                d.lagHalfLifeMillis(),
                d.lagWarmup(),
                d.soloColdByLoad(),
                d.sessionWork(),
                d.familyHalfLifeMillis(),
                d.soloBurstByFamilies(),
                d.coldMatchShare()));
    for (String bad :
        new String[] {"nope=1", "workWeight", "workWeight=x", "fitTiming=yes", "concurrency=x"}) {
      assertThatThrownBy(() -> d.with(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
      assertThat(Policies.known(Policies.TUNED + bad)).as(bad).isFalse();
    }
  }
}

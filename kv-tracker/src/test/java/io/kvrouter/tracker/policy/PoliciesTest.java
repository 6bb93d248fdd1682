package io.kvrouter.tracker.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvrouter.protocol.Tier;
import org.junit.jupiter.api.Test;

class PoliciesTest {

  @Test
  void kvrouter_isTheDefault_listedFirst_andTheOnlyOneWithoutTheLab() {
    assertThat(Policies.DEFAULT).isEqualTo("kvrouter");
    assertThat(Policies.names()).containsExactly("kvrouter");
    assertThat(Fixture.policy("kvrouter", 1).name()).isEqualTo("kvrouter");
    assertThat(Fixture.policy("kvrouter", 1))
        .isInstanceOf(WatchesPeers.class)
        .isInstanceOf(HoldsDecisions.class)
        .isInstanceOf(SharesIntents.class);
  }

  @Test
  void anUnknownName_isRejectedListingTheKnownOnes() {
    assertThatThrownBy(() -> Fixture.policy("dynamo_kv", 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown policy 'dynamo_kv'")
        .hasMessageContaining("kvrouter");
    assertThat(Policies.known("kvrouter@hold.from=0")).isTrue();
    assertThat(Policies.known("nope")).isFalse();
  }

  @Test
  void kvrouter_seesThePeersReservationsAndPredictedBlocks() {
    Visibility v = Policies.visibility("kvrouter");
    assertThat(v.peerReservations()).isTrue();
    assertThat(v.predictedBlocks()).isTrue();
    assertThat(v.globalScheduler()).isFalse();
  }

  /**
   * A variant runs kvrouter with the named setting changed: with work weight 0 the 6,000 tokens
   * queued ahead of the cached replica (about 123 ms) lose to recomputing the prompt on the idle
   * one (about 86 ms), which the default's work term (about 155 ms) does not.
   */
  @Test
  void aVariant_runsKvrouterWithTheNamedSettingChanged() {
    Fixture f = new Fixture(2);
    long[] prompt = Fixture.prompt(1, 256);
    f.cache(0, prompt, 256, Tier.GPU);
    f.prefill[0] = 6_000;
    assertThat(f.rank(Fixture.policy("kvrouter", 1), prompt)[0]).isEqualTo(0);
    Policy tuned = Fixture.policy("kvrouter@cost.work-weight=0", 1);
    assertThat(tuned.name()).isEqualTo("kvrouter@cost.work-weight=0");
    assertThat(f.rank(tuned, prompt)[0]).isEqualTo(1);
  }
}

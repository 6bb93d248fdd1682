package io.kvrouter.tracker.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;

class PolicySettingsTest {

  /**
   * The defaults of reference.conf, pinned: a changed default changes every figure the lab prints.
   */
  @Test
  void defaults_areThoseOfReferenceConf() {
    PolicySettings d = PolicySettings.defaults();
    assertThat(d.name()).isEqualTo("kvrouter");
    assertThat(d.cost())
        .isEqualTo(
            new PolicySettings.Cost(8192, 1.0, 1.5, 1.0, 1.0, 0.0, 1000.0, 0.1, 0.9, 0.25, 4.16));
    assertThat(d.timing()).isEqualTo(new PolicySettings.Timing(true, 0.999));
    assertThat(d.lag()).isEqualTo(new PolicySettings.Lag(50.0, 1000.0, 8));
    assertThat(d.ties()).isEqualTo(new PolicySettings.Ties(true, 2.0, 0.02, 1.0, true, 100.0));
    assertThat(d.peers()).isEqualTo(new PolicySettings.Peers(1000, 30_000, 1000, 5.0));
    assertThat(d.hold())
        .isEqualTo(new PolicySettings.Hold(400.0, 3, 1.2, 100.0, 1.0, 150.0, 2.0, 0.5));
    assertThat(d.cold()).isEqualTo(new PolicySettings.Cold(20.0, 1.0, 0.5, true, 600_000.0, true));
    assertThat(d.intents()).isEqualTo(new PolicySettings.Intents(true, 50.0));
  }

  @Test
  void aBlock_overridesOnlyWhatItSets() {
    PolicySettings s =
        PolicySettings.fromConfig(
            ConfigFactory.parseString(
                "hold.from = 250ms\nintents.enabled = off\ncost.chunk-tokens = 4096"));
    PolicySettings d = PolicySettings.defaults();
    assertThat(s.hold().fromMillis()).isEqualTo(250.0);
    assertThat(s.intents().enabled()).isFalse();
    assertThat(s.cost().chunkTokens()).isEqualTo(4096);
    assertThat(s.ties()).isEqualTo(d.ties());
    assertThat(s.cold()).isEqualTo(d.cold());
  }

  @Test
  void aVariantName_setsItsSettingsByPath_andKeepsTheWholeName() {
    PolicySettings s =
        PolicySettings.parse("kvrouter@hold.from=0@ties.spread=off@cost.work-weight=2");
    assertThat(s.name()).isEqualTo("kvrouter@hold.from=0@ties.spread=off@cost.work-weight=2");
    assertThat(s.baseName()).isEqualTo("kvrouter");
    assertThat(s.hold().fromMillis()).isZero();
    assertThat(s.ties().spread()).isFalse();
    assertThat(s.cost().workWeight()).isEqualTo(2.0);
    assertThat(PolicySettings.parse("kvrouter")).isEqualTo(PolicySettings.defaults());
  }

  @Test
  void badSettings_areRejectedNamingTheKey() {
    assertThatThrownBy(() -> PolicySettings.parse("kvrouter@nope=1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nope=1");
    assertThatThrownBy(() -> PolicySettings.parse("kvrouter@hold=1"))
        .hasMessageContaining("hold=1");
    assertThatThrownBy(() -> PolicySettings.parse("kvrouter@cost.work-weight"))
        .hasMessageContaining("KEY=VALUE");
    assertThatThrownBy(() -> PolicySettings.parse("kvrouter@cost.work-weight=x"))
        .hasMessageContaining("cost.work-weight");
    assertThatThrownBy(() -> PolicySettings.parse("kvrouter@cost.cold-match-share=1"))
        .hasMessageContaining("cost.cold-match-share");
    assertThatThrownBy(
            () -> PolicySettings.fromConfig(ConfigFactory.parseString("hold.from = -1ms")))
        .hasMessageContaining("hold.from");
  }
}

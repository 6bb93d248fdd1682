package io.kvrouter.ingress.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.tracker.TrackerConfig;
import io.kvrouter.tracker.policy.BusyThresholds;
import io.kvrouter.tracker.policy.PolicySettings;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NodeSettingsTest {

  private static Config with(Map<String, Object> overrides) {
    return ConfigFactory.parseMap(overrides).withFallback(ConfigFactory.load());
  }

  @Test
  void referenceConf_givesTheDefaultsTheNodeUsedToHardCode() {
    IngressNodeSettings node = IngressNodeSettings.fromConfig(ConfigFactory.load());
    assertThat(node)
        .isEqualTo(
            new IngressNodeSettings(
                IngressNodeSettings.Consistency.BROADCAST,
                Duration.ofSeconds(5),
                Duration.ofSeconds(10),
                Duration.ofSeconds(1),
                Duration.ofSeconds(2),
                Duration.ofSeconds(1)));
    TrackerConfig tracker =
        TrackerSettings.fromConfig(ConfigFactory.load()).trackerConfig("pekko://kvrouter@h:1");
    // A node sends its reservations on the compact wire; the plain-Java default (the lab, tests:
    // no wire) names them by request id.
    assertThat(tracker)
        .isEqualTo(TrackerConfig.defaults("pekko://kvrouter@h:1").withCompactReservations(true));
  }

  @Test
  void overrides_reachTheTrackerConfig() {
    TrackerConfig tracker =
        TrackerSettings.fromConfig(
                with(
                    Map.of(
                        "kvrouter.tracker.lease", "1m",
                        "kvrouter.tracker.predicted-ttl", "5s",
                        "kvrouter.tracker.approximate-ttl", "7s",
                        "kvrouter.tracker.policy.ties.spread", "off",
                        "kvrouter.tracker.policy.intents.enabled", "off",
                        "kvrouter.tracker.policy.cost.cpu-load-per-token", "10us",
                        "kvrouter.tracker.busy.max-in-flight", "32",
                        "kvrouter.tracker.reservation-wire", "legacy")))
            .trackerConfig("in-1");
    assertThat(tracker.compactReservations()).isFalse();
    assertThat(tracker.leaseMillis()).isEqualTo(60_000);
    assertThat(tracker.predictedTtlMillis()).isEqualTo(5_000);
    assertThat(tracker.approximateTtlMillis()).isEqualTo(7_000);
    PolicySettings d = PolicySettings.defaults();
    assertThat(tracker.policy().withoutSpreading()).isEqualTo(tracker.policy());
    assertThat(tracker.policy().ties()).isEqualTo(d.withoutSpreading().ties());
    assertThat(tracker.policy().cost().cpuLoadMicrosPerToken()).isEqualTo(10.0);
    assertThat(tracker.policy().hold()).isEqualTo(d.hold());
    assertThat(tracker.busy()).isEqualTo(new BusyThresholds(0.97, 64, 32));
  }

  @Test
  void aBadPolicySetting_failsTheStartNamingIt() {
    assertThatThrownBy(
            () ->
                TrackerSettings.fromConfig(
                    with(Map.of("kvrouter.tracker.policy.hold.from", "soon"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("kvrouter.tracker.policy")
        .hasMessageContaining("hold.from");
  }

  @Test
  void consistency_isBroadcastOrStrict_anythingElseIsRefusedByName() {
    assertThat(
            IngressNodeSettings.fromConfig(with(Map.of("kvrouter.consistency", "strict")))
                .consistency())
        .isEqualTo(IngressNodeSettings.Consistency.STRICT);
    assertThatThrownBy(
            () -> IngressNodeSettings.fromConfig(with(Map.of("kvrouter.consistency", "eventual"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("kvrouter.consistency must be broadcast or strict, was eventual");
  }
}

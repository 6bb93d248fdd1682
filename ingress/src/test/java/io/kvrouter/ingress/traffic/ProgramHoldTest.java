package io.kvrouter.ingress.traffic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A program is held on its replica unless its history no longer fits there, beside the others
 * counted, in the configured share of the replica's cache while another replica has room for it;
 * sessions unseen for the idle setting or released are no longer counted.
 */
class ProgramHoldTest {

  /** 100,000 tokens of cache, 80 % of it for histories, sessions forgotten after 60 s unseen. */
  private static ProgramHold hold() {
    return new ProgramHold(new ProgramHold.Settings(100_000, 0.8, Duration.ofSeconds(60), true));
  }

  @Test
  void aHistoryThatNoLongerFits_isLetGoWhileAnotherReplicaHasRoom_andHeldWhenNoneHas() {
    ProgramHold hold = hold();
    assertThat(hold.admit("a", "r0", 40_000, 0)).isTrue();
    assertThat(hold.admit("b", "r0", 30_000, 0)).isTrue();
    assertThat(hold.admit("x", "r1", 10_000, 0)).isTrue();
    // 40k + 30k + 20k > 80k on r0, and r1 has room: c may move.
    assertThat(hold.admit("c", "r0", 20_000, 0)).isFalse();
    assertThat(hold.heldTokens("r0")).isEqualTo(90_000); // c is still counted where it is bound
    assertThat(hold.admit("y", "r1", 65_000, 0)).isTrue(); // 10k + 65k fits r1
    // Now no replica has room for c: moving would only evict another's history, so c stays.
    assertThat(hold.admit("c", "r0", 20_000, 1)).isTrue();
  }

  @Test
  void withoutHoldingFittingSessions_onlyAFullClusterHolds() {
    ProgramHold hold =
        new ProgramHold(new ProgramHold.Settings(100_000, 0.8, Duration.ofSeconds(60), false));
    assertThat(hold.admit("a", "r0", 40_000, 0)).isTrue(); // no other replica known: none has room
    assertThat(hold.admit("x", "r1", 10_000, 0)).isFalse(); // r0 has room for it
    assertThat(hold.admit("a", "r0", 40_000, 1)).isFalse(); // fits r0, but r1 has room: not held
    assertThat(hold.admit("y", "r1", 65_000, 1)).isTrue(); // r0 (40k) has no room for 65k
    assertThat(hold.admit("b", "r0", 45_000, 1)).isTrue(); // r1 (75k) has no room for 45k
  }

  @Test
  void aSessionsOwnEarlierTurn_isNotCountedAgainstIt() {
    ProgramHold hold = hold();
    assertThat(hold.admit("a", "r0", 40_000, 0)).isTrue();
    assertThat(hold.admit("b", "r0", 30_000, 0)).isTrue();
    assertThat(hold.admit("x", "r1", 0, 0)).isTrue();
    assertThat(hold.admit("a", "r0", 50_000, 1_000)).isTrue(); // 50k + 30k: fits
    assertThat(hold.admit("a", "r0", 60_000, 2_000)).isFalse(); // 60k + 30k > 80k; r1 has room
    assertThat(hold.heldTokens("r0")).isEqualTo(90_000);
  }

  @Test
  void aSessionIdleLongerThanTheSetting_orReleased_isNoLongerCounted() {
    ProgramHold hold = hold();
    assertThat(hold.admit("a", "r0", 70_000, 0)).isTrue();
    assertThat(hold.admit("z", "r1", 0, 60_000)).isTrue();
    assertThat(hold.admit("b", "r0", 20_000, 60_000)).isFalse(); // a seen 60 s ago: counted
    assertThat(hold.admit("b", "r0", 20_000, 60_001)).isTrue(); // a unseen past 60 s: forgotten
    assertThat(hold.heldTokens("r0")).isEqualTo(20_000);
    hold.release("b");
    assertThat(hold.heldTokens("r0")).isZero();
  }

  @Test
  void settingsComeFromReferenceConf_offByDefault_andBadOnesAreRefused() {
    ProgramHold.Settings d = ProgramHold.Settings.fromConfig(ConfigFactory.defaultReference());
    assertThat(d.enabled()).isFalse();
    assertThat(d.share()).isEqualTo(0.75);
    assertThatThrownBy(() -> new ProgramHold(d))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("replica-cache-tokens");
    assertThatThrownBy(() -> new ProgramHold.Settings(1, 1.5, Duration.ofSeconds(1), true))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("share");
  }
}

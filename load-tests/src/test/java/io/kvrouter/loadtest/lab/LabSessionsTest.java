package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.Workloads;
import io.kvrouter.tracker.Decision;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The ingress's session affinity in the lab ({@code +affinity}): the product's session router binds
 * a session where its request went and hands the binding to the next decision, with the ingress's
 * TTL and refresh, and a run with it keeps a program's turns on their replica.
 */
class LabSessionsTest {

  /** A placer that records what it was asked and places on {@code replica}. */
  private static final class Asked implements LabSessions.Placer {
    final List<String> bound = new ArrayList<>();
    final List<Boolean> opens = new ArrayList<>();
    String replica = "r3";

    @Override
    public Decision place(String boundReplica, boolean opensSession, boolean held) {
      bound.add(boundReplica);
      opens.add(opensSession);
      return new Decision("q", replica, List.of(), null);
    }
  }

  @Test
  void aSessionIsBoundWhereItWent_andItsNextTurnAsksForThatReplica() {
    LabSessions sessions = LabSessions.defaults();
    Asked asked = new Asked();
    assertThat(sessions.decide("q1", "s", 0, asked).chosen()).isEqualTo("r3");
    sessions.decide("q2", "s", 1_000, asked);
    asked.replica = "r5"; // the tracker moved it (busy, or beaten by more than the bonus)
    sessions.decide("q3", "s", 2_000, asked);
    sessions.decide("q4", "s", 3_000, asked);
    sessions.decide("q5", "other", 3_000, asked);
    assertThat(asked.bound).containsExactly(null, "r3", "r3", "r5", null);
    assertThat(asked.opens).containsExactly(true, false, false, false, true);
    assertThat(sessions.affinityBonusTokens()).isEqualTo(2048); // the ingress's default
  }

  @Test
  void aBindingExpiresItsTtlAfterItsLastWrite_whichUseRenewsOnlyPastTheRefresh() {
    LabSessions sessions = LabSessions.defaults();
    Asked asked = new Asked();
    long ttl = 30 * 60_000L;
    sessions.decide("q1", "s", 0, asked); // written at 0
    sessions.decide("q2", "s", 30_000, asked); // kept, younger than the 1 min refresh: no write
    assertThat(sessions.boundReplica("s", ttl)).isEqualTo("r3");
    assertThat(sessions.boundReplica("s", ttl + 1)).isNull();
    sessions.decide("q3", "s", 90_000, asked); // kept, older than the refresh: written at 90 s
    assertThat(sessions.boundReplica("s", 90_000 + ttl)).isEqualTo("r3");
    sessions.decide("q4", "s", 90_001 + ttl, asked);
    assertThat(asked.bound).containsExactly(null, "r3", "r3", null);
    assertThat(asked.opens).containsExactly(true, false, false, true);
  }

  @Test
  void aRequestOfNoSession_isPlacedWithoutABinding() {
    LabSessions sessions = LabSessions.defaults();
    Asked asked = new Asked();
    sessions.decide("q1", "", 0, asked);
    sessions.decide("q2", "", 1, asked);
    assertThat(asked.bound).containsExactly(null, null);
    assertThat(asked.opens).containsExactly(false, false);
  }

  @Test
  void onlyKvroutersPoliciesTakeAffinity() {
    assertThat(LabProgramFeatures.of("kvrouter+las+affinity"))
        .isEqualTo(new LabProgramFeatures(false, true, true, false, 0, false, -1));
    assertThatThrownBy(() -> LabProgramFeatures.of("llmd_precise+affinity"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("kvrouter's ingress session affinity");
  }

  @Test
  void anAgentRunWithAffinity_keepsMoreTurnsOnTheirSessionsReplica() {
    Workload w = Workloads.byName("agents", Map.of("programs", "12"), 1);
    LabConfig config =
        LabConfig.defaults(8)
            .withCapacity(32_768)
            .withPolicies(List.of("kvrouter", "kvrouter+affinity"));
    LabResults results = PolicyLab.run(w, config, 1, "test");
    SessionMeasures without = results.policies().get(0).sessions();
    SessionMeasures with = results.policies().get(1).sessions();
    assertThat(results.policies()).allMatch(p -> p.completed() == w.size());
    // Without it, kvrouter's policy moves about one follow-up in fourteen (0.927).
    assertThat(without.followUpSameReplica()).isLessThan(0.95);
    assertThat(with.followUpSameReplica()).isGreaterThan(0.98);
    // Where a session's time went: the tool runs are the workload's, the same under any policy,
    // and the parts add up to the session.
    ProgramResult.SessionTime a = results.policies().get(0).programs().sessionTime();
    ProgramResult.SessionTime b = results.policies().get(1).programs().sessionTime();
    assertThat(a.sessions()).isEqualTo(12);
    assertThat(a.toolS()).isPositive().isCloseTo(b.toolS(), within(1e-9));
    assertThat(a.firstTokenS()).isPositive();
    assertThat(a.decodeS()).isPositive();
    assertThat(a.firstTokenS() + a.decodeS() + a.toolS() + a.subAgentS())
        .isCloseTo(a.totalS(), within(1e-6));
    assertThat(results.policies().get(0).programs().slowSessionTime().totalS())
        .isGreaterThanOrEqualTo(a.totalS());
  }

  @Test
  void underLoad_keepAndHoldKeepEverySessionOnItsReplica_whereAffinityLetsBusyOnesMove() {
    Workload w =
        Workloads.byName(
            "agents", Map.of("programs", "16", "medianTurns", "15", "programQps", "2"), 1);
    LabConfig config =
        LabConfig.defaults(3)
            .withCapacity(12_288)
            .withPolicies(List.of("kvrouter+affinity", "kvrouter+keep", "kvrouter+hold"));
    LabResults results = PolicyLab.run(w, config, 1, "test");
    SessionMeasures affinity = results.policies().get(0).sessions();
    SessionMeasures keep = results.policies().get(1).sessions();
    SessionMeasures hold = results.policies().get(2).sessions();
    assertThat(results.policies()).allMatch(p -> p.completed() == w.size());
    // The bound replica is busy often enough here that affinity lets 3 follow-ups in 10 move.
    assertThat(affinity.followUpSameReplica()).isLessThan(0.8);
    assertThat(keep.followUpSameReplica()).isEqualTo(1.0);
    assertThat(keep.followUpCached()).isGreaterThan(affinity.followUpCached());
    // Three replicas of 196k tokens for 16 agents: no replica has room for a history that does
    // not fit where it is, so the ingress's hold lets none go, as keep does.
    assertThat(hold.followUpSameReplica()).isEqualTo(1.0);
    assertThat(hold.followUpCached()).isGreaterThan(affinity.followUpCached());
  }

  @Test
  void aHoldSuffix_isAffinityWithTheIngresssHold() {
    LabProgramFeatures f = LabProgramFeatures.of("kvrouter+las+hold");
    assertThat(f).isEqualTo(new LabProgramFeatures(false, true, true, false, -1, false, -1));
    assertThat(LabProgramFeatures.of("kvrouter+hold50").holdPercent()).isEqualTo(50);
    assertThat(LabProgramFeatures.of("kvrouter+holdfull").holdOnlyWhenFull()).isTrue();
    assertThatThrownBy(() -> LabProgramFeatures.of("kvrouter+hold101"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("+holdN");
    assertThatThrownBy(() -> LabProgramFeatures.of("llmd_precise+hold"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("+hold");
  }

  @Test
  void aBonusSuffix_isAffinityWithThatBonus() {
    LabProgramFeatures f = LabProgramFeatures.of("kvrouter+las+bonus32768");
    assertThat(f).isEqualTo(new LabProgramFeatures(false, true, true, false, 0, false, 32_768));
    assertThat(LabSessions.withBonus(f.bonusTokens()).affinityBonusTokens()).isEqualTo(32_768);
    assertThat(LabProgramFeatures.of("kvrouter+las").affinity()).isFalse();
    assertThatThrownBy(() -> LabProgramFeatures.of("kvrouter+bonus"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("+bonusN");
  }
}

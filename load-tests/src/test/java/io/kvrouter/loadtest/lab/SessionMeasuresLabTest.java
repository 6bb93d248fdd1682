package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.WorkloadRequest;
import io.kvrouter.loadtest.workload.Workloads;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The session measures of a lab run ({@link SessionMeasures}) against what they must be, worked out
 * from the workload alone.
 */
class SessionMeasuresLabTest {

  private static Workload sessions() {
    return Workloads.byName(
        "many-sessions",
        Map.of(
            "sessions", "300",
            "sessionQps", "30",
            "t2Ratio", "0.6",
            "thinkSeconds", "10",
            "systemPrefixTokens", "100",
            "systemPrefixPool", "4",
            "userTokens", "40",
            "answerTokens", "30"),
        3);
  }

  /**
   * One replica of unlimited capacity holds every block it computed, its answers' included (the
   * workload knows them): a follow-up finds exactly its previous turn's prompt and answer cached,
   * in whole 16-token blocks, less the answer's last token, which is never fed back (the previous
   * turn is long done after a think time of 5 s or more).
   */
  @Test
  void oneReplica_cachesEachFollowUpsPreviousPromptAndAnswer_inWholeBlocks() {
    Workload w = sessions();
    long cached = 0;
    long prompt = 0;
    long followUps = 0;
    Map<String, Integer> previous = new HashMap<>();
    for (WorkloadRequest r : w.requests()) {
      Integer prev = previous.put(r.session(), r.inputLength() + r.outputLength() - 1);
      if (r.turn() > 0) {
        cached += prev / 16 * 16;
        prompt += r.inputLength();
        followUps++;
      }
    }
    assertThat(followUps).isGreaterThan(200);
    PolicyResult r =
        PolicyLab.run(w, LabConfig.defaults(1).withPolicies(List.of("kvrouter")), 1, "t")
            .policy("kvrouter");
    SessionMeasures m = r.sessions();
    assertThat(m.followUps()).isEqualTo(followUps);
    assertThat(m.followUpCached()).isCloseTo((double) cached / prompt, within(1e-9));
    assertThat(m.followUpSameReplica()).isEqualTo(1.0);
    assertThat(m.loadCov()).isZero();
    assertThat(m.trackerNodes()).isPositive();
    assertThat(m.trackerBytes()).isGreaterThan(m.trackerNodes() * 8);
  }

  /** Round robin over 4 replicas scatters follow-ups and spreads requests evenly. */
  @Test
  void roundRobin_scattersFollowUps_andSpreadsRequestsEvenly() {
    PolicyResult r =
        PolicyLab.run(
                sessions(), LabConfig.defaults(4).withPolicies(List.of("round_robin")), 1, "t")
            .policy("round_robin");
    SessionMeasures m = r.sessions();
    assertThat(m.followUpSameReplica()).isBetween(0.1, 0.4);
    assertThat(m.loadCov()).isLessThan(0.01);
  }

  @Test
  void cov_isThePopulationStandardDeviationOverTheMean() {
    assertThat(SessionMeasures.cov(new long[] {1, 2, 3}))
        .isCloseTo(Math.sqrt(2.0 / 3) / 2, within(1e-12));
    assertThat(SessionMeasures.cov(new long[] {0, 0})).isZero();
  }

  @Test
  void aWorkloadWithoutFollowUps_hasNoSessionMeasures() {
    Workload single =
        Workloads.byName("many-sessions", Map.of("sessions", "50", "t2Ratio", "0"), 3);
    assertThat(
            PolicyLab.run(single, LabConfig.defaults(2).withPolicies(List.of("kvrouter")), 1, "t")
                .policy("kvrouter")
                .sessions())
        .isNull();
  }
}

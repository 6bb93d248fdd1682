package io.kvrouter.ingress.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.metrics.PrometheusText;
import org.junit.jupiter.api.Test;

class DecisionMetricsTest {

  private static double sample(IngressMetrics metrics, String name) {
    return PrometheusText.parse(metrics.scrape()).samples().stream()
        .filter(s -> s.name().equals(name))
        .mapToDouble(PrometheusText.Sample::value)
        .sum();
  }

  /**
   * A long prompt held 18 ms then decided in 0.2 ms: the decision latency shows 0.2 ms, the wait
   * shows apart; a decision taken at once records no wait.
   */
  @Test
  void aHeldDecision_countsItsWaitApart_fromTheDecisionLatency() {
    IngressMetrics metrics = new IngressMetrics();
    metrics.decision(18_200_000, 18);
    metrics.decision(100_000, 0);

    assertThat(sample(metrics, "kvrouter_decision_seconds_count")).isEqualTo(2);
    assertThat(sample(metrics, "kvrouter_decision_seconds_sum"))
        .isCloseTo(0.0003, org.assertj.core.api.Assertions.within(1e-9));
    assertThat(sample(metrics, "kvrouter_decision_hold_seconds_count")).isEqualTo(1);
    assertThat(sample(metrics, "kvrouter_decision_hold_seconds_sum")).isEqualTo(0.018);
  }
}

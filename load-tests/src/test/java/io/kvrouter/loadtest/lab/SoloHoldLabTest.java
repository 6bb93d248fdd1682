package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.loadtest.workload.PromptTokens;
import io.kvrouter.loadtest.workload.TokenExpander;
import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.WorkloadRequest;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * One router, two replicas. Two conversations open on different replicas; a second later a
 * 60k-token prompt nothing holds and the two conversations' next turns reach the router in the same
 * instant, the long prompt first. Decided in arrival order, the long prompt takes one replica and
 * the next turn cached there leaves its cache rather than wait 2.4 s behind it. With the solo hold
 * (the default), the long prompt is decided a few milliseconds later, after both turns went to
 * their caches, and goes where it delays the lighter one: both turns hit.
 */
@org.junit.jupiter.api.Timeout(120)
class SoloHoldLabTest {

  private static final int OPENING = 2_048;

  private static Workload longPromptBeforeTwoNextTurns() {
    TokenExpander e = new TokenExpander(5);
    PromptTokens a = PromptTokens.empty(e).extend(11, OPENING);
    PromptTokens b = PromptTokens.empty(e).extend(12, OPENING);
    long burst = 1_000_000;
    return Workload.of(
        "long-before-next-turns",
        5,
        0,
        List.of(
            new WorkloadRequest(0, 0, "a", 0, a, 16, null),
            new WorkloadRequest(1, 0, "b", 0, b, 16, null),
            new WorkloadRequest(
                2, burst, "giant", 0, PromptTokens.empty(e).extend(1, 60_000), 16, null),
            new WorkloadRequest(3, burst, "a", 1, a.extend(21, 200), 16, null),
            new WorkloadRequest(4, burst, "b", 1, b.extend(22, 200), 16, null)));
  }

  @Test
  void aLongPromptArrivingWithShortOnes_isDecidedAfterThem_whichKeepTheirCache() {
    LabConfig config =
        LabConfig.defaults(2).withPolicies(List.of("kvrouter", "kvrouter@hold.solo=0"));
    Workload w = longPromptBeforeTwoNextTurns();
    long promptTokens = 0;
    for (WorkloadRequest r : w.requests()) {
      promptTokens += r.prompt().length();
    }
    LabResults r = PolicyLab.run(w, config, 1, "t");
    for (String policy : List.of("kvrouter", "kvrouter@hold.solo=0")) {
      assertThat(r.policy(policy).completed()).as(policy).isEqualTo(5);
    }
    double held = r.policy("kvrouter").hitRate() * promptTokens;
    double inOrder = r.policy("kvrouter@hold.solo=0").hitRate() * promptTokens;
    assertThat(held)
        .as("both next turns on their cache")
        .isGreaterThanOrEqualTo(2 * (OPENING - 16));
    assertThat(inOrder).as("one next turn left its cache").isLessThan(OPENING + 16);
  }
}

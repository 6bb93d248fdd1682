package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.loadtest.workload.PromptTokens;
import io.kvrouter.loadtest.workload.TokenExpander;
import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.WorkloadRequest;
import io.kvrouter.tracker.policy.EngineTiming;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * One 60k-token prompt and seven 2k-token prompts reach eight routers at the same instant, two
 * replicas, 5 ms between routers. Deciding at once, the long prompt lands before the short ones on
 * its replica, and those of them placed there wait its whole prefill, as no router could see it.
 * With the hold (the default), the long prompt is decided three steps later, after the short ones'
 * reservations arrived: none of them waits behind it. Deciding at once means without intents too,
 * whose own wait would hold the long prompt a delay.
 */
@org.junit.jupiter.api.Timeout(120)
class DecisionHoldLabTest {

  private static Workload giantAmongSmallOnes() {
    TokenExpander e = new TokenExpander(5);
    List<WorkloadRequest> requests = new ArrayList<>();
    // One short request per router first: routers know their peers from their reservations.
    for (int i = 0; i < 8; i++) {
      requests.add(
          new WorkloadRequest(
              i, 0, "warm-" + i, 0, PromptTokens.empty(e).extend(200 + i, 512), 16, null));
    }
    long burst = 1_000_000;
    requests.add(
        new WorkloadRequest(
            8, burst, "giant", 0, PromptTokens.empty(e).extend(1, 60_000), 16, null));
    for (int i = 1; i < 8; i++) {
      requests.add(
          new WorkloadRequest(
              8 + i,
              burst,
              "small-" + i,
              0,
              PromptTokens.empty(e).extend(100 + i, 2_000),
              16,
              null));
    }
    return Workload.of("giant-among-small", 5, 0, requests);
  }

  @Test
  void aLongPromptInABurst_isDecidedAfterTheShortOnes_whichNoLongerQueueBehindIt() {
    LabConfig config =
        LabConfig.defaults(2)
            .withPolicies(List.of("kvrouter", "kvrouter@hold.from=0@intents.enabled=false"))
            .withRouters(8, 5_000);
    LabResults r = PolicyLab.run(giantAmongSmallOnes(), config, 1, "t");
    double giantPrefill = EngineTiming.MOCKER.computeMillis(60_000);
    for (String policy : List.of("kvrouter", "kvrouter@hold.from=0@intents.enabled=false")) {
      assertThat(r.policy(policy).completed()).as(policy).isEqualTo(16);
    }
    assertThat(slowestShortOne(r.policy("kvrouter@hold.from=0@intents.enabled=false")))
        .as("at once")
        .isGreaterThan(giantPrefill / 2);
    assertThat(slowestShortOne(r.policy("kvrouter"))).as("held").isLessThan(giantPrefill / 10);
  }

  /** The second-slowest first token: the slowest short prompt's (the long one's is the slowest). */
  private static double slowestShortOne(PolicyResult result) {
    double[] sorted = result.ttftSortedMillis();
    return sorted[sorted.length - 2];
  }
}

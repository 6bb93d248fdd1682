package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.loadtest.workload.PromptTokens;
import io.kvrouter.loadtest.workload.TokenExpander;
import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.WorkloadRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Four routers 5 ms apart, eight replicas. Four requests a few milliseconds apart let the routers
 * hear each other; a second later sixteen unique 4,096-token prompts (about 90 ms of prefill each,
 * enough to wait for the peers' announcements) reach them in the same instant, four per router,
 * none of them able to see another's reservations in time. With intents each router hears the
 * others' requests before it decides and places them first, so the burst spreads two per replica;
 * without them (spreading off, to isolate the mechanism) the four routers make the same four
 * choices.
 */
@org.junit.jupiter.api.Timeout(120)
class IntentsLabTest {

  private static final String WITH = "kvrouter@intents.enabled=true@ties.spread=off";
  private static final String WITHOUT = "kvrouter@intents.enabled=false@ties.spread=off";

  private static Workload warmUpThenBurst() {
    TokenExpander e = new TokenExpander(5);
    List<WorkloadRequest> requests = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      long arrival = i < 4 ? i * 10_000L : 1_000_000L;
      PromptTokens prompt = PromptTokens.empty(e).extend(100 + i, 4_096);
      requests.add(new WorkloadRequest(i, arrival, "s" + i, 0, prompt, 16, null));
    }
    return Workload.of("warm-up-then-burst", 5, 0, requests);
  }

  @Test
  void aBurstThroughFourRouters_spreadsAsOneRouterWould_whenTheyHearEachOthersIntents() {
    LabConfig config =
        LabConfig.defaults(8).withRouters(4, 5_000).withPolicies(List.of(WITH, WITHOUT));
    LabResults r = PolicyLab.run(warmUpThenBurst(), config, 1, "t");
    for (String policy : List.of(WITH, WITHOUT)) {
      assertThat(r.policy(policy).completed()).as(policy).isEqualTo(20);
    }
    long[] with = r.policy(WITH).perReplicaDecisions();
    long[] without = r.policy(WITHOUT).perReplicaDecisions();
    assertThat(Arrays.stream(with).max().orElseThrow())
        .as("with intents, per replica: %s", Arrays.toString(with))
        .isLessThanOrEqualTo(3);
    assertThat(Arrays.stream(without).max().orElseThrow())
        .as("without, per replica: %s", Arrays.toString(without))
        .isGreaterThanOrEqualTo(4);
  }
}

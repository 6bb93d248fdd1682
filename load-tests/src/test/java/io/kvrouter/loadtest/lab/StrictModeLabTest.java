package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.Workloads;
import java.util.List;
import org.junit.jupiter.api.Test;

@org.junit.jupiter.api.Timeout(300)
class StrictModeLabTest {

  @Test
  void policyNames_takeAStrictSuffix_andUnknownOnesAreRejected() {
    assertThat(LabPolicy.parse("kvrouter/strict")).isEqualTo(new LabPolicy("kvrouter", true));
    assertThat(LabPolicy.parse("dynamo_kv")).isEqualTo(new LabPolicy("dynamo_kv", false));
    assertThatThrownBy(() -> LabPolicy.parse("nope/strict"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("/strict");
    assertThat(LabPolicy.parse("kvrouter@cost.work-weight=2/strict"))
        .isEqualTo(new LabPolicy("kvrouter@cost.work-weight=2", true));
    assertThatThrownBy(() -> LabPolicy.parse("kvrouter@bogus=1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("bogus")
        .hasMessageContaining("kvrouter.tracker.policy");
  }

  /**
   * A burst of 64 requests reaches 4 routers at once, 5 ms apart from each other. Routers that
   * break ties the same way (spreading off) herd in broadcast mode; in strict mode the replicas'
   * gates turn away the decisions taken on a stale view, the routers decide again, and the burst's
   * placement evens out. Every request completes either way.
   */
  @Test
  void strictMode_turnsAwayHerdingDecisions_atTheGate() {
    Workload w = Workloads.bundled(Workloads.MOONCAKE_CONVERSATION, 0L).limit(200);
    LabConfig config =
        LabConfig.defaults(4)
            .withPolicies(
                List.of(
                    "kvrouter@ties.spread=off@intents.enabled=off",
                    "kvrouter@ties.spread=off@intents.enabled=off/strict"))
            .withRouters(4, 5_000)
            .withChaos(-1, 0, 0, 64);
    LabResults r = PolicyLab.run(w, config, 2, "t");
    PolicyResult broadcast = r.policy("kvrouter@ties.spread=off@intents.enabled=off");
    PolicyResult strict = r.policy("kvrouter@ties.spread=off@intents.enabled=off/strict");
    assertThat(broadcast.completed()).isEqualTo(200);
    assertThat(strict.completed()).isEqualTo(200);
    assertThat(broadcast.decisions()).isEqualTo(200);
    assertThat(strict.decisions()).isGreaterThan(200);
    assertThat(strict.loadMaxOverMean()).isLessThan(broadcast.loadMaxOverMean());
  }
}

package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvrouter.loadtest.workload.Workloads;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The figures published with the Mooncake traces (listed in the bundled traces' README, {@code
 * load-tests/src/main/resources/io/kvrouter/loadtest/traces/README.md}), reproduced by the lab's
 * full simulation.
 *
 * <p>A system test ({@code mvn verify -Psystem}): it replays the whole conversation trace (12,031
 * requests; 4-8 s of a 2-core machine at load 2-5, 20-36 s at load 11-12); {@link
 * ReferenceFiguresTest} checks the lab's round robin on a subset.
 */
class ReferenceFiguresIT {

  @Test
  void conversationTrace_unlimited_singleCache0_3664_roundRobinOver8_0_136() {
    LabConfig config = LabConfig.defaults(8).withPolicies(List.of("round_robin"));
    LabResults r =
        PolicyLab.run(Workloads.bundled(Workloads.MOONCAKE_CONVERSATION, 0L), config, 1, "test");
    PolicyResult rr = r.policy("round_robin");
    System.out.printf(
        "single cache %.4f/%.4f, round robin block %.4f, engines %.4f%n",
        r.bound().blockRate(), r.bound().tokenRate(), rr.blockHitRate(), rr.hitRate());

    assertThat(r.bound().blockRate()).isCloseTo(0.3664, within(0.002));
    assertThat(rr.blockHitRate()).isCloseTo(0.136, within(0.002));
    assertThat(rr.completed()).isEqualTo(12_031);
    // The engines count 16-token blocks, capped at prompt - 1 tokens: close to the block figure.
    assertThat(rr.hitRate()).isCloseTo(rr.blockHitRate(), within(0.01));
    assertThat(r.bound().tokenRate()).isCloseTo(r.bound().blockRate(), within(0.01));
  }
}

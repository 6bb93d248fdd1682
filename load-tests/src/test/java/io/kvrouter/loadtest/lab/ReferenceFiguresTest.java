package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.loadtest.workload.PrefixCacheBound;
import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.Workloads;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The lab's round robin on the first 1,500 requests of the conversation trace counts the hits the
 * block counter behind the published figures counts; {@link ReferenceFiguresIT} reproduces the
 * figures on the whole trace.
 */
class ReferenceFiguresTest {

  @Test
  void traceSubset_labRoundRobin_equalsTheBlockCounterRoundRobin() {
    Workload w = Workloads.bundled(Workloads.MOONCAKE_CONVERSATION, 0L).limit(1500);
    LabResults r =
        PolicyLab.run(w, LabConfig.defaults(8).withPolicies(List.of("round_robin")), 1, "test");
    double expected = PrefixCacheBound.roundRobin(w, 8).blockHitRate();
    assertThat(r.policy("round_robin").blockHitRate()).isEqualTo(expected);
    long[] perReplica = r.policy("round_robin").perReplicaDecisions();
    assertThat(perReplica[0]).isEqualTo(188); // 1500 = 8 x 187 + 4: replicas 0..3 get one more
    assertThat(perReplica[7]).isEqualTo(187);
  }
}

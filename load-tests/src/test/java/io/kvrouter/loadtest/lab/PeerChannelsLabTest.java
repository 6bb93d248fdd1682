package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.loadtest.workload.MultiTurnChatWorkload;
import io.kvrouter.loadtest.workload.Workload;
import org.junit.jupiter.api.Test;

/** The lab joins one run's routers on their peer's own channel (SMG's mesh), and no other run's. */
class PeerChannelsLabTest {

  /**
   * 64 chats over 4 SMG gateways: a chat's turns are dealt over the gateways, so a gateway alone
   * has mostly not seen the earlier turns it could follow; on the mesh it learns its peers' inserts
   * and sends more of them to the replica that holds them. With one gateway the mesh has no peer
   * and the run is the plain gateway's, to the last digit, although another run built its mesh
   * before.
   */
  @Test
  void theMeshJoinsTheGatewaysOfOneRun_andAGatewayAloneDecidesAsWithoutIt() {
    Workload w = MultiTurnChatWorkload.generate(MultiTurnChatWorkload.Config.DEFAULTS, 1);
    PromptKeys keys = PromptKeys.compute(w, LabConfig.MODEL, 16);
    LabConfig four = LabConfig.defaults(4).withRouters(4, 5_000);
    LabConfig one = LabConfig.defaults(4).withRouters(1, 5_000);

    PolicyResult alone = LabSimulation.run(w, keys, four, "sglang_cache_aware");
    PolicyResult mesh = LabSimulation.run(w, keys, four, "sglang_mesh");
    assertThat(mesh.hitRate()).isGreaterThan(alone.hitRate() + 0.05);

    assertThat(LabSimulation.run(w, keys, one, "sglang_mesh").hitRate())
        .isEqualTo(LabSimulation.run(w, keys, one, "sglang_cache_aware").hitRate());
  }
}

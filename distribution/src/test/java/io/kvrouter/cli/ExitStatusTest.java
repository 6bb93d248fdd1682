package io.kvrouter.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.config.node.NodeFailed;
import java.util.Optional;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.junit.jupiter.api.Test;

class ExitStatusTest {

  @Test
  void aNodeAskedToStop_exitsZero() {
    assertThat(ExitStatus.of(Optional.empty()).status()).isZero();
    for (CoordinatedShutdown.Reason asked :
        new CoordinatedShutdown.Reason[] {
          CoordinatedShutdown.jvmExitReason(),
          CoordinatedShutdown.clusterLeavingReason(),
          CoordinatedShutdown.actorSystemTerminateReason()
        }) {
      ExitStatus.Outcome o = ExitStatus.of(Optional.of(asked));
      assertThat(o.status()).as("%s", asked).isZero();
      assertThat(o.explanation()).as("%s", asked).isEmpty();
    }
  }

  @Test
  void aNodeTheClusterDowned_exitsOne_sayingWhy() {
    ExitStatus.Outcome o = ExitStatus.of(Optional.of(CoordinatedShutdown.clusterDowningReason()));
    assertThat(o.status()).isEqualTo(1);
    assertThat(o.explanation()).hasValueSatisfying(s -> assertThat(s).contains("downed"));
  }

  @Test
  void aNodeThatCouldNotJoin_orFailed_exitsOne_sayingWhy() {
    assertThat(
            ExitStatus.of(Optional.of(CoordinatedShutdown.clusterJoinUnsuccessfulReason()))
                .status())
        .isEqualTo(1);
    ExitStatus.Outcome failed = ExitStatus.of(Optional.of(new NodeFailed("port 8080 is taken")));
    assertThat(failed.status()).isEqualTo(1);
    assertThat(failed.explanation()).hasValue("kvrouter: port 8080 is taken");
  }
}

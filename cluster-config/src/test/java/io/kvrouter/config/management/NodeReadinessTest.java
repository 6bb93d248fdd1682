package io.kvrouter.config.management;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class NodeReadinessTest {

  private final ActorTestKit kit = ActorTestKit.create();

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  private static boolean ready(NodeReadiness r) {
    return r.ready().toCompletableFuture().join();
  }

  @Test
  void readyOnlyWhenEveryRoleSaysSo_andNeverAgainOnceDraining() {
    NodeReadiness readiness = NodeReadiness.get(kit.system());
    AtomicBoolean caughtUp = new AtomicBoolean();
    readiness.register(() -> CompletableFuture.completedFuture(caughtUp.get()));
    readiness.register(() -> CompletableFuture.completedFuture(true));
    assertThat(ready(readiness)).isFalse();
    caughtUp.set(true);
    assertThat(ready(readiness)).isTrue();
    readiness.startDraining();
    assertThat(readiness.draining()).isTrue();
    assertThat(ready(readiness)).isFalse();
  }

  @Test
  void aFailingQuery_countsAsNotReady() {
    NodeReadiness readiness = NodeReadiness.get(kit.system());
    readiness.register(() -> CompletableFuture.failedFuture(new IllegalStateException("boom")));
    assertThat(ready(readiness)).isFalse();
  }

  @Test
  void theManagementCheck_asksTheNodesReadiness() {
    NodeReadiness readiness = NodeReadiness.get(kit.system());
    AtomicBoolean ok = new AtomicBoolean(true);
    readiness.register(() -> CompletableFuture.completedFuture(ok.get()));
    KvrouterReadinessCheck check =
        new KvrouterReadinessCheck(
            org.apache.pekko.actor.typed.javadsl.Adapter.toClassic(kit.system()));
    assertThat(check.get().toCompletableFuture().join()).isTrue();
    ok.set(false);
    assertThat(check.get().toCompletableFuture().join()).isFalse();
  }
}

package io.kvrouter.ingress.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.ingress.metrics.IngressMetrics;
import java.time.Duration;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;

/**
 * What proxy tests wait for after the client has its answer: metrics and reservations are settled
 * when the engine's stream ends, which may come a little later.
 */
final class ProxyAwait {

  private ProxyAwait() {}

  /** Waits up to 10 s for {@code metrics} to show {@code line}. */
  static void metric(ActorTestKit kit, IngressMetrics metrics, String line) {
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(10),
            () -> {
              assertThat(metrics.scrape()).contains(line);
              return null;
            });
  }

  /** Waits up to 10 s for every reservation {@code router} made to be released. */
  static void noOpenReservations(ActorTestKit kit, FakeRouter router) {
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(10),
            () -> {
              assertThat(router.open).isEmpty();
              return null;
            });
  }
}

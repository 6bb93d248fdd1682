package io.kvrouter.systemtest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.loadtest.bench.PseudoWords;
import io.kvrouter.testing.LoopbackHttp;
import java.time.Duration;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * Intents between real ingress processes' reservation planes ({@code
 * kvrouter@intents.enabled=true}): each ingress shares its timing model every tracker tick, and a
 * long request held before its decision reaches the other ingress as an intent, over the cluster's
 * Kryo wire, named by the origin's member uid and resolved to its address there. What the peer does
 * with it is the policy's, tested in {@code KvRouterPolicyTest} and the lab ({@code
 * IntentsLabTest}).
 */
class IntentsIT {

  private static final Config INTENTS =
      ConfigFactory.parseString("kvrouter.tracker.policy.intents.enabled = on");

  @Test
  void aHeldLongRequest_reachesThePeerIngressAsAnIntent_andTimingModelsAreShared()
      throws Exception {
    try (ClusterHarness cluster = new ClusterHarness(1)) {
      cluster.addIngress(INTENTS);
      cluster.addIngress(INTENTS);
      cluster.startAgent("a", 2);
      ActorTestKit kit = ActorTestKit.create(cluster.ingresses().get(0).system());
      cluster.awaitReady(kit, 2);
      String first = cluster.ingresses().get(0).url();
      String second = cluster.ingresses().get(1).url();
      // Each hears the other's model: intents are on between them.
      kit.createTestProbe()
          .awaitAssert(
              Duration.ofSeconds(20),
              Duration.ofMillis(100),
              () -> {
                assertThat(metric(first, "kvrouter_peer_timings_total")).isPositive();
                assertThat(metric(second, "kvrouter_peer_timings_total")).isPositive();
                return null;
              });
      assertThat(metric(second, "kvrouter_peer_intents_total")).isZero();

      // About 3,000 prompt tokens: some 65 ms of prefill, above intentsFromMillis (50 ms).
      String body =
          "{\"model\":\""
              + ClusterHarness.MODEL
              + "\",\"prompt\":\""
              + PseudoWords.words(77, 3_000)
              + "\",\"max_tokens\":2}";
      assertThat(LoopbackHttp.post(first + "/v1/completions", body).statusCode()).isEqualTo(200);

      kit.createTestProbe()
          .awaitAssert(
              Duration.ofSeconds(10),
              Duration.ofMillis(100),
              () -> {
                assertThat(metric(second, "kvrouter_peer_intents_total")).isEqualTo(1.0);
                return null;
              });
      assertThat(metric(first, "kvrouter_peer_intents_total")).as("nothing sent to").isZero();
      assertThat(metric(first, "kvrouter_decision_hold_seconds_count")).isEqualTo(1.0);
    }
  }

  private static double metric(String url, String name) throws Exception {
    return LoopbackHttp.metric(url, name);
  }
}

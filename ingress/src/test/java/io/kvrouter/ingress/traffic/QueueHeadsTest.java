package io.kvrouter.ingress.traffic;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** What one ingress's gossip tells the others, and when. */
class QueueHeadsTest {

  private static final ActorTestKit testKit = ActorTestKit.create(ConfigFactory.load());

  private static final Duration COALESCE = Duration.ofMillis(300);

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  static QueueState state(Integer priority, Map<String, Double> waiting, Map<String, Integer> run) {
    return new QueueState("m", priority, waiting, run);
  }

  /** The next head this ingress ("self") told, skipping what the test published as "other". */
  static QueueHead nextOwn(TestProbe<QueueHead> told) {
    while (true) {
      QueueHead h = told.receiveMessage(Duration.ofSeconds(5));
      if (h.ingress().equals("self")) {
        return h;
      }
    }
  }

  /** No head of this ingress within {@code within} (what "other" published is skipped). */
  static void noneOwn(TestProbe<QueueHead> told, Duration within) {
    long end = System.nanoTime() + within.toNanos();
    while (System.nanoTime() < end) {
      QueueHead h;
      try {
        h = told.receiveMessage(Duration.ofNanos(Math.max(1, end - System.nanoTime())));
      } catch (AssertionError nothingCame) {
        return;
      }
      assertThat(h.ingress()).as(String.valueOf(h)).isNotEqualTo("self");
    }
  }

  @Test
  void whatWaitsIsToldAtOnce_runningCountsAtMostOncePerCoalesce_andOnlyWhileSomeoneWaits() {
    PeerQueues peers = new PeerQueues(Duration.ofMinutes(1).toNanos());
    ActorRef<QueueHeads.Command> heads =
        testKit.spawn(QueueHeads.create("self", peers, Duration.ofHours(1), COALESCE));
    ActorRef<Topic.Command<QueueHead>> topic =
        testKit.spawn(Topic.create(QueueHead.class, QueueHeads.TOPIC));
    TestProbe<QueueHead> told = testKit.createTestProbe();
    topic.tell(Topic.subscribe(told.ref()));
    QueueHead otherWaits = new QueueHead("other", "m", 0, Map.of("q", 1.0), Map.of());
    told.awaitAssert(
        Duration.ofSeconds(10),
        Duration.ofMillis(50),
        () -> {
          topic.tell(Topic.publish(otherWaits));
          assertThat(told.receiveMessage(Duration.ofMillis(50))).isEqualTo(otherWaits);
          assertThat(peers.waiting("m", System.nanoTime())).isTrue();
          return null;
        });

    heads.tell(new QueueHeads.LocalHead(state(0, Map.of("n", 1.0), Map.of("n", 1))));
    assertThat(nextOwn(told).waiting()).as("what waits: at once").containsOnlyKeys("n");
    for (int running = 2; running <= 4; running++) {
      heads.tell(new QueueHeads.LocalHead(state(0, Map.of("n", 1.0), Map.of("n", running))));
    }
    assertThat(nextOwn(told).running()).as("the counts, once").isEqualTo(Map.of("n", 4));
    noneOwn(told, COALESCE.multipliedBy(2));

    // Nobody waits any more: counts alone are not told, until a peer starts waiting.
    topic.tell(Topic.publish(new QueueHead("other", "m", null, Map.of(), Map.of())));
    heads.tell(new QueueHeads.LocalHead(state(null, Map.of(), Map.of("n", 4))));
    assertThat(nextOwn(told).priority()).as("nothing waits here now: at once").isNull();
    heads.tell(new QueueHeads.LocalHead(state(null, Map.of(), Map.of("n", 3))));
    noneOwn(told, COALESCE.multipliedBy(2));
    topic.tell(Topic.publish(otherWaits));
    assertThat(nextOwn(told).running())
        .as("a peer started waiting: it needs the counts")
        .isEqualTo(Map.of("n", 3));
  }
}

package io.kvrouter.tracker;

import static io.kvrouter.tracker.KvTrackerCoreTest.KEYS;
import static io.kvrouter.tracker.KvTrackerCoreTest.MODEL;
import static io.kvrouter.tracker.KvTrackerCoreTest.replica;
import static io.kvrouter.tracker.KvTrackerCoreTest.stored;
import static io.kvrouter.tracker.KvTrackerCoreTest.tokens;
import static io.kvrouter.tracker.KvTrackerCoreTest.tracker;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.tracker.steering.QueueAheadTtftPredictor;
import io.kvrouter.tracker.steering.Steering;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Session affinity and TTFT targets as the tracker applies them on top of its policy. */
class SteeringTest {

  private static RouteRequest request(String id, int salt, Steering steering) {
    return new RouteRequest(id, MODEL, KEYS.keys(tokens(160, salt)), 160, Set.of(), true, steering);
  }

  @Test
  void boundReplica_winsEveryNearTie_thatThePolicyWouldOtherwiseSpread() {
    KvTrackerCore t = tracker("in-1", "a", "b", "c");
    Set<String> unsteered = new HashSet<>();
    for (int i = 0; i < 30; i++) {
      Decision d = t.selectAndReserve(request("free" + i, 1000 + i, Steering.NONE), i);
      unsteered.add(d.chosen());
      t.released("free" + i);
    }
    assertThat(unsteered).as("fresh prompts spread over the near-tie").hasSizeGreaterThan(1);

    Steering toB = new Steering("b", 512, 0, null);
    for (int i = 0; i < 30; i++) {
      Decision d = t.selectAndReserve(request("s" + i, 2000 + i, toB), 100 + i);
      assertThat(d.chosen()).isEqualTo("b");
      t.released("s" + i);
    }
  }

  @Test
  void replicaHoldingThePrompt_beatsTheBoundOne_byMoreThanTheBonus() {
    KvTrackerCore t = tracker("in-1", "a", "b");
    long[] prompt = KEYS.keys(tokens(160, 7));
    t.apply(stored("a", 0, prompt, 10)); // a holds all 160 tokens, b none

    RouteRequest small = new RouteRequest("q1", MODEL, prompt, 160, Set.of(), true, bonus(64));
    assertThat(t.selectAndReserve(small, 0).chosen()).isEqualTo("a");
    t.released("q1");

    RouteRequest large = new RouteRequest("q2", MODEL, prompt, 160, Set.of(), true, bonus(200));
    assertThat(t.selectAndReserve(large, 0).chosen()).isEqualTo("b");
  }

  private static Steering bonus(double tokens) {
    return new Steering("b", tokens, 0, null);
  }

  @Test
  void busyBoundReplica_isLeft_evenWithAHugeBonus() {
    KvTrackerCore t = KvTrackerCoreTest.busyAt(2);
    t.replicaUp(replica("a", true));
    t.replicaUp(replica("b", true));
    Steering toB = new Steering("b", 1e9, 0, null);

    assertThat(t.selectAndReserve(request("q1", 1, toB), 0).chosen()).isEqualTo("b");
    assertThat(t.selectAndReserve(request("q2", 2, toB), 0).chosen()).isEqualTo("b");
    assertThat(t.selectAndReserve(request("q3", 3, toB), 0).chosen())
        .as("b has max-in-flight reservations: busy")
        .isEqualTo("a");
  }

  @Test
  void boundReplicaThatLeft_isIgnored() {
    KvTrackerCore t = tracker("in-1", "a", "b");
    t.replicaDown("b");
    Decision d = t.selectAndReserve(request("q", 1, new Steering("b", 1e9, 0, null)), 0);
    assertThat(d.chosen()).isEqualTo("a");
  }

  @Test
  void ttftTarget_movesTheRequestToACandidateThatMeetsIt() {
    KvTrackerCore t = tracker("in-1", "a", "b");
    QueueAheadTtftPredictor oneMsPerToken = new QueueAheadTtftPredictor(0, 1.0);
    // 1,000 tokens queued on a (reserved, not yet prefilled).
    t.selectAndReserve(
        new RouteRequest(
            "big", MODEL, KEYS.keys(tokens(1000, 9)), 1000, Set.of("b"), true, Steering.NONE),
        0);
    long[] prompt = KEYS.keys(tokens(160, 8));
    t.apply(stored("a", 0, prompt, 10)); // a would serve it from cache: 0 uncached tokens

    Decision slo =
        t.selectAndReserve(
            new RouteRequest(
                "slo",
                MODEL,
                prompt,
                160,
                Set.of(),
                true,
                new Steering(null, 0, 500, oneMsPerToken)),
            0);
    assertThat(slo.chosen()).as("a: 1000 ms queued; b: 160 ms of prefill").isEqualTo("b");
    assertThat(slo.ranked().get(0).predictedTtftMillis()).isEqualTo(160.0);
    assertThat(slo.ranked().get(1).predictedTtftMillis()).isEqualTo(1000.0);
  }

  @Test
  void ttftTargetNoCandidateMeets_reservesNothing_andShowsPredictionsAndFloors() {
    KvTrackerCore t = tracker("in-1", "a", "b");
    QueueAheadTtftPredictor p = new QueueAheadTtftPredictor(10, 1.0);
    t.selectAndReserve(
        new RouteRequest(
            "qa", MODEL, KEYS.keys(tokens(800, 1)), 800, Set.of("b"), true, Steering.NONE),
        0);
    t.selectAndReserve(
        new RouteRequest(
            "qb", MODEL, KEYS.keys(tokens(800, 2)), 800, Set.of("a"), true, Steering.NONE),
        0);
    int open = t.openReservations();

    Decision d =
        t.selectAndReserve(
            new RouteRequest(
                "slo",
                MODEL,
                KEYS.keys(tokens(160, 3)),
                160,
                Set.of(),
                true,
                new Steering(null, 0, 300, p)),
            0);

    assertThat(d.placed()).isFalse();
    assertThat(d.busy()).isTrue();
    assertThat(d.sloMiss()).isTrue();
    assertThat(t.openReservations()).isEqualTo(open);
    assertThat(d.ranked())
        .allSatisfy(
            c -> {
              assertThat(c.predictedTtftMillis()).isEqualTo(10 + 800 + 160.0);
              assertThat(c.ttftFloorMillis()).isEqualTo(10 + 160.0);
            });

    Decision lab =
        t.selectAndReserve(
            new RouteRequest(
                "lab",
                MODEL,
                KEYS.keys(tokens(160, 4)),
                160,
                Set.of(),
                false,
                new Steering(null, 0, 300, p)),
            0);
    assertThat(lab.placed()).as("without admission the order stands").isTrue();
  }
}

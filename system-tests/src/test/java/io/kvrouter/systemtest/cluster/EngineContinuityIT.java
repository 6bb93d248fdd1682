package io.kvrouter.systemtest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.systemtest.engine.IndependentVllmEngine;
import io.kvrouter.systemtest.engine.IndependentVllmEngine.Down;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The two faults of issue 13, reproduced against an engine kvrouter did not write ({@link
 * IndependentVllmEngine}: its own cache and hash, vLLM's wire format, a restart that announces
 * nothing, replay answers that come late), with real trackers on two ingress nodes:
 *
 * <ol>
 *   <li>after a silent restart (5 s away with connections refused, long enough for the agent to
 *       deregister the replica; or 0.5 s away answering 503, too short for that), with and without
 *       {@code process_start_time_seconds}, the trackers hold exactly the new engine's blocks soon
 *       after its return, in a new epoch, and never take back the old picture;
 *   <li>after replays that time out (an answer that comes late; an outage of the same engine
 *       process, which keeps its cache) no block the engine holds is missing and the epoch is
 *       unchanged (the same engine needs no clean slate).
 * </ol>
 *
 * "Soon after its return" is printed as a figure next to the health interval; the test waits on the
 * condition with a generous deadline rather than asserting on wall-clock time.
 */
class EngineContinuityIT {

  private static final Duration HEARTBEAT = Duration.ofMillis(500);
  private static final int DEAD_AFTER = 3;
  private static final Duration DEADLINE = Duration.ofSeconds(30);

  private static IndependentVllmEngine.Config config(boolean startTime, boolean mapEvents) {
    return new IndependentVllmEngine.Config("kvrouter-demo", 16, 256, startTime, mapEvents);
  }

  static Stream<Arguments> silentRestarts() {
    return Stream.of(
        Arguments.of(Duration.ofSeconds(5), Down.REFUSED, true),
        Arguments.of(Duration.ofSeconds(5), Down.REFUSED, false),
        Arguments.of(Duration.ofMillis(500), Down.UNAVAILABLE_503, true),
        Arguments.of(Duration.ofMillis(500), Down.UNAVAILABLE_503, false));
  }

  @ParameterizedTest(name = "away {0} ({1}), start time exported: {2}")
  @MethodSource("silentRestarts")
  void silentRestart_trackersHoldExactlyTheNewEnginesBlocks_soonAfterItsReturn(
      Duration outage, Down how, boolean startTime) throws Exception {
    try (EngineRig rig = new EngineRig(config(startTime, true), HEARTBEAT, DEAD_AFTER)) {
      rig.awaitRegistered(DEADLINE);
      rig.warm(12, 200, 1);
      rig.awaitExact(DEADLINE);
      long oldEpoch = rig.epoch();
      assertThat(rig.expected().count()).as("the engine holds blocks").isGreaterThan(30);

      long back = rig.engine.restartSilently(outage, how);
      System.out.printf(
          "engine back at %s%n", java.time.LocalTime.now().toString()); // to read the agent's log
      long clearedAt = rig.awaitEpochAfter(oldEpoch, DEADLINE);
      long exactAt = rig.awaitExact(DEADLINE);
      long newEpoch = rig.epoch();
      System.out.printf(
          "silent restart, away %d ms (%s), start time %s: every tracker in a new epoch %d ms after"
              + " the engine's return, exact %d ms after (health interval %d ms); engine holds %d"
              + " blocks%n",
          outage.toMillis(),
          how,
          startTime ? "exported" : "absent",
          (clearedAt - back) / 1_000_000,
          (exactAt - back) / 1_000_000,
          HEARTBEAT.toMillis(),
          rig.expected().count());
      assertThat(newEpoch).as("a new epoch cleared the old picture").isGreaterThan(oldEpoch);
      assertThat(rig.engine.incarnation()).isEqualTo(2);
      rig.awaitConverged(DEADLINE);

      // The stale picture is never offered again. After an outage the agent noticed (a failed
      // health check) it publishes nothing until it has settled who the engine is, so every
      // heartbeat after the engine's return carries the new epoch; the old epoch's heartbeats
      // made trackers that had dropped the replica replay the old picture back. Without a failed
      // check, heartbeats with the old epoch may precede the verdict: trackers still hold that
      // epoch then, so they ask for nothing.
      long since = outage.compareTo(HEARTBEAT.multipliedBy(DEAD_AFTER)) > 0 ? back : exactAt;
      rig.awaitHeartbeatsAfter(since, 2, DEADLINE);
      assertThat(rig.loads)
          .filteredOn(h -> h.atNanos() > since)
          .extracting(h -> h.load().epoch())
          .isNotEmpty()
          .allMatch(e -> e == newEpoch);

      // New traffic after the restart lands in the same, exact picture.
      rig.warm(4, 200, 2);
      rig.awaitExact(DEADLINE);
      assertThat(rig.epoch()).isEqualTo(newEpoch);
    }
  }

  @Test
  void replayAnsweredAfterItTimedOut_noBlockTheEngineHoldsIsMissing_andTheEpochStands()
      throws Exception {
    try (EngineRig rig = new EngineRig(config(false, false), HEARTBEAT, DEAD_AFTER)) {
      rig.awaitRegistered(DEADLINE);
      rig.warm(6, 200, 1);
      rig.awaitExact(DEADLINE);
      long epoch = rig.epoch();

      // A live batch is lost and the engine answers the next two replays after 3 s, later than
      // the agent waits (2 s): each late answer reaches a socket that no longer exists.
      long replaysBefore = rig.engine.replayRequests();
      rig.engine.answerReplaysLate(2, Duration.ofSeconds(3));
      rig.engine.dropNextLive(1);
      rig.warm(6, 200, 2);
      long exactAt = rig.awaitExact(DEADLINE);
      System.out.printf(
          "replay answered late: exact again after %d replay requests%n",
          rig.engine.replayRequests() - replaysBefore);
      assertThat(rig.engine.replayRequests() - replaysBefore).isGreaterThanOrEqualTo(3);
      assertThat(rig.epoch()).as("the same engine: no new epoch").isEqualTo(epoch);

      // ... and every later replay is matched to its own request.
      rig.engine.dropNextLive(1);
      rig.warm(4, 200, 3);
      rig.awaitExact(DEADLINE);
      assertThat(rig.epoch()).isEqualTo(epoch);
      rig.awaitConverged(DEADLINE);
      assertThat(exactAt).isPositive();
    }
  }

  @Test
  void outageOfTheSameEngineProcess_replaysTimedOutMeanwhile_noBlockIsMissing_andTheEpochStands()
      throws Exception {
    try (EngineRig rig = new EngineRig(config(false, true), HEARTBEAT, DEAD_AFTER)) {
      rig.awaitRegistered(DEADLINE);
      rig.warm(8, 200, 1);
      rig.awaitExact(DEADLINE);
      long epoch = rig.epoch();

      // Away for 4 s (the agent deregisters; its replay requests meanwhile time out), then back
      // with its cache, sequence and replay buffer; then a lost live batch needs a replay.
      rig.engine.goAway(Duration.ofSeconds(4), Down.UNAVAILABLE_503);
      rig.awaitRegistered(DEADLINE);
      rig.engine.dropNextLive(1);
      rig.warm(6, 200, 2);
      rig.awaitExact(DEADLINE);
      assertThat(rig.epoch()).as("the same engine: no new epoch").isEqualTo(epoch);
      rig.awaitConverged(DEADLINE);
    }
  }
}

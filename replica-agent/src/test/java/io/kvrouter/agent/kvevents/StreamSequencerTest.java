package io.kvrouter.agent.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.engine.EngineEventBatch;
import io.kvrouter.protocol.engine.EventEncoding;
import io.kvrouter.sim.VllmEventEncoder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class StreamSequencerTest {

  /** What the handler saw, as strings. */
  private final List<String> seen = new ArrayList<>();

  private final List<String> continuity = new ArrayList<>();

  private final EngineStreamHandler handler =
      new EngineStreamHandler() {
        @Override
        public void onBatch(long seq, EngineEventBatch batch) {
          seen.add("batch " + seq);
        }

        @Override
        public void onEngineRestart(long lastSeq, long newSeq) {
          seen.add("restart " + lastSeq + "->" + newSeq);
        }

        @Override
        public void onUnrecoverableGap(long fromSeq, long toSeq) {
          seen.add("gap " + fromSeq + ".." + toSeq);
        }
      };

  /** The engine's replay buffer. */
  private final TreeMap<Long, byte[]> buffer = new TreeMap<>();

  private final List<Long> fetches = new ArrayList<>();

  /** While false, replay requests go unanswered (the engine is away or slow). */
  private boolean answering = true;

  private final long[] now = {0};

  private static final SubscriberSettings SETTINGS = SubscriberSettings.defaults();

  private EngineReplay fetch(long from) {
    fetches.add(from);
    if (!answering) {
      return EngineReplay.unanswered();
    }
    List<TransportFrames.Message> out = new ArrayList<>();
    buffer.tailMap(from, true).forEach((s, p) -> out.add(new TransportFrames.Message(s, p)));
    return EngineReplay.of(out);
  }

  private StreamSequencer sequencer(boolean withReplay) {
    return new StreamSequencer(
        handler,
        withReplay ? this::fetch : null,
        "t",
        SETTINGS,
        () -> now[0],
        () -> continuity.add("restart"));
  }

  /** Batch {@code seq} of engine process {@code process}: its bytes differ from any other's. */
  private static byte[] payload(long seq, int process) {
    return new VllmEventEncoder(EventEncoding.MAP)
        .encode(new EngineEventBatch(seq + 1000.0 * process, List.of(), 0));
  }

  private static byte[] payload(long seq) {
    return payload(seq, 0);
  }

  /** The engine process {@code process} published {@code [from, to)} (into its buffer). */
  private void buffered(long from, long to, int process) {
    for (long s = from; s < to; s++) {
      buffer.put(s, payload(s, process));
    }
  }

  private void buffered(long from, long to) {
    buffered(from, to, 0);
  }

  /** Process 0 publishes {@code [from, to)} and the sequencer hears them live. */
  private void live(StreamSequencer s, long from, long to) {
    buffered(from, to);
    for (long i = from; i < to; i++) {
      s.onLive(i, payload(i));
    }
  }

  private void later(Duration d) {
    now[0] += d.toNanos();
  }

  @Test
  void inOrderStream_isDeliveredWithoutReplay() {
    StreamSequencer s = sequencer(true);
    live(s, 0, 3);
    assertThat(seen).containsExactly("batch 0", "batch 1", "batch 2");
    assertThat(fetches).isEmpty();
  }

  @Test
  void lateJoiner_replaysFromZeroBeforeTheFirstLiveBatch() {
    buffered(0, 5);
    StreamSequencer s = sequencer(true);
    s.onLive(5, payload(5));
    assertThat(fetches).containsExactly(0L);
    assertThat(seen)
        .containsExactly("batch 0", "batch 1", "batch 2", "batch 3", "batch 4", "batch 5");
  }

  @Test
  void gap_isFilledFromReplay_andWhatTheBufferLostIsReported() {
    StreamSequencer s = sequencer(true);
    live(s, 0, 1);
    buffered(3, 6); // 1 and 2 fell out of the buffer
    s.onLive(6, payload(6));
    assertThat(fetches).containsExactly(1L);
    assertThat(seen)
        .containsExactly("batch 0", "gap 1..3", "batch 3", "batch 4", "batch 5", "batch 6");
  }

  @Test
  void gapWithoutReplaySocket_isUnrecoverable() {
    StreamSequencer s = sequencer(false);
    s.onLive(0, payload(0));
    s.onLive(3, payload(3));
    assertThat(seen).containsExactly("batch 0", "gap 1..3", "batch 3");
    assertThat(s.audit()).isZero();
  }

  @Test
  void batchesGoneBeforeAnythingWasDelivered_needNoNewEpoch_theSlateIsClean() {
    buffered(7, 9); // an agent joining an engine whose buffer no longer reaches 0
    StreamSequencer s = sequencer(true);
    s.onLive(9, payload(9));
    assertThat(seen).containsExactly("batch 7", "batch 8", "batch 9");
  }

  @Test
  void regression_isAnEngineRestart_andTheNewStreamReplaysFromZero() {
    StreamSequencer s = sequencer(true);
    live(s, 0, 4);
    buffer.clear();
    buffered(0, 2, 1); // the new engine's first two batches, missed live
    s.onLive(2, payload(2, 1));
    assertThat(seen)
        .containsSubsequence("batch 3", "restart 3->2", "batch 0", "batch 1", "batch 2");
    assertThat(s.expected()).isEqualTo(3);
    assertThat(continuity).containsExactly("restart");
  }

  @Test
  void audit_deliversWhatLiveMissed_andTheLateLiveCopiesAreNotARestart() {
    StreamSequencer s = sequencer(true);
    live(s, 0, 1);
    buffered(0, 4);
    assertThat(s.audit()).isEqualTo(3);
    s.onLive(1, payload(1)); // live copies queued behind the audit
    s.onLive(2, payload(2));
    s.onLive(4, payload(4));
    assertThat(seen).containsExactly("batch 0", "batch 1", "batch 2", "batch 3", "batch 4");
  }

  @Test
  void twoAuditsAheadOfLive_theLiveCopiesOfBoth_areDuplicatesNotARestart() {
    StreamSequencer s = sequencer(true);
    live(s, 0, 2);
    buffered(2, 4);
    assertThat(s.audit()).isEqualTo(2); // heartbeats queued behind a slow replay: two audits
    buffered(4, 6);
    assertThat(s.audit()).isEqualTo(2);
    buffered(6, 7);
    for (long i = 2; i < 7; i++) {
      s.onLive(i, payload(i)); // the live copies arrive only now
    }
    assertThat(seen)
        .containsExactly(
            "batch 0", "batch 1", "batch 2", "batch 3", "batch 4", "batch 5", "batch 6");
    assertThat(continuity).isEmpty();
  }

  @Test
  void undecodablePayload_isCountedAndSkippedWithoutStallingTheSequence() {
    StreamSequencer s = sequencer(true);
    s.onLive(0, new byte[] {(byte) 0xc1});
    s.onLive(1, payload(1));
    assertThat(s.malformed()).isEqualTo(1);
    assertThat(seen).containsExactly("batch 1");
    assertThat(fetches).isEmpty();
  }

  // ---------------------------------------------------------------- a lost reply is a retry

  @Test
  void unansweredReplay_holdsTheLiveBatches_andAsksAgain_neverDeclaringThemLost() {
    StreamSequencer s = sequencer(true);
    live(s, 0, 2);
    buffered(2, 5);
    answering = false;
    s.onLive(4, payload(4)); // 2 and 3 were lost live; the replay goes unanswered
    s.onLive(5, payload(5));
    assertThat(seen).containsExactly("batch 0", "batch 1");
    assertThat(s.held()).isEqualTo(2);
    s.onIdle(); // not due yet: no new request
    assertThat(fetches).containsExactly(2L);

    answering = true;
    buffered(5, 6);
    later(SETTINGS.replayRetry());
    s.onIdle();
    assertThat(seen)
        .containsExactly("batch 0", "batch 1", "batch 2", "batch 3", "batch 4", "batch 5");
    assertThat(fetches).containsExactly(2L, 2L);
    assertThat(s.unanswered()).isEqualTo(1);
    assertThat(continuity).isEmpty();
  }

  @Test
  void healthChecksFasterThanADeadReplay_askItOnlyAfterTheRetryWait() {
    StreamSequencer s = sequencer(true);
    live(s, 0, 3);
    answering = false;
    s.onHealthy(Double.NaN); // the audit goes unanswered
    s.onHealthy(Double.NaN);
    assertThat(fetches).containsExactly(0L);
    later(SETTINGS.replayRetry());
    s.onHealthy(Double.NaN);
    assertThat(fetches).containsExactly(0L, 0L);

    s.onDisconnected(); // the proof is asked for at once, then not before the retry wait either
    s.onHealthy(Double.NaN);
    s.onHealthy(Double.NaN);
    assertThat(fetches).containsExactly(0L, 0L, 2L);
    later(SETTINGS.replayRetry());
    s.onHealthy(Double.NaN);
    s.onHealthy(Double.NaN);
    assertThat(fetches).containsExactly(0L, 0L, 2L, 2L);
  }

  @Test
  void replayThatNeverAnswers_isGivenUpAfterTheLimit_andOnlyThenTheGapIsLost() {
    StreamSequencer s = sequencer(true);
    live(s, 0, 2);
    answering = false;
    s.onLive(4, payload(4));
    later(SETTINGS.giveUpAfter().minusMillis(1));
    s.onLive(5, payload(5));
    assertThat(seen).containsExactly("batch 0", "batch 1");
    later(Duration.ofMillis(2));
    s.onIdle();
    assertThat(seen).containsExactly("batch 0", "batch 1", "gap 2..4", "batch 4", "batch 5");
  }

  // ---------------------------------------------------------------- continuity or a clean slate

  @Test
  void afterADisconnect_theSameEngine_isProvenByItsReplay_andBlocksAreKept() {
    StreamSequencer s = sequencer(true);
    live(s, 0, 3);
    s.onDisconnected();
    buffered(3, 5); // published while we were away
    s.onLive(5, payload(5));
    assertThat(seen)
        .containsExactly("batch 0", "batch 1", "batch 2", "batch 3", "batch 4", "batch 5");
    assertThat(fetches).containsExactly(2L);
    assertThat(continuity).isEmpty();
    assertThat(s.interrupted()).isFalse();
  }

  @Test
  void afterADisconnect_anEngineThatRacedPastTheLastSeq_isARestart_despiteTheExpectedSeq() {
    StreamSequencer s = sequencer(true);
    live(s, 0, 3);
    s.onDisconnected();
    buffer.clear();
    buffered(0, 4, 1); // the new process published 0..3, 0..2 before we reconnected
    s.onLive(3, payload(3, 1)); // exactly the seq expected next: no regression shows
    assertThat(seen)
        .containsExactly(
            "batch 0",
            "batch 1",
            "batch 2",
            "restart 2->-1",
            "batch 0",
            "batch 1",
            "batch 2",
            "batch 3");
    assertThat(continuity).containsExactly("restart");
  }

  @Test
  void afterADisconnect_liveBatchesWaitForTheVerdict_whileTheReplayIsUnanswered() {
    StreamSequencer s = sequencer(true);
    live(s, 0, 2);
    s.onDisconnected();
    answering = false;
    buffered(2, 4);
    s.onLive(2, payload(2));
    s.onLive(3, payload(3));
    assertThat(seen).containsExactly("batch 0", "batch 1");
    answering = true;
    later(SETTINGS.replayRetry());
    s.onIdle();
    assertThat(seen).containsExactly("batch 0", "batch 1", "batch 2", "batch 3");
    assertThat(continuity).isEmpty();
  }

  @Test
  void afterADisconnect_aReplayThatNeverAnswers_withNothingHeld_isARestartAfterTheLimit() {
    StreamSequencer s = sequencer(true);
    live(s, 0, 3);
    s.onDisconnected(); // a data-parallel rank died: its stream stops, the front-end stays healthy
    answering = false;
    s.onHealthy(Double.NaN); // asks the replay, unanswered
    later(SETTINGS.giveUpAfter().minusMillis(1));
    s.onIdle();
    s.onHealthy(Double.NaN); // asks again, unanswered
    assertThat(seen).containsExactly("batch 0", "batch 1", "batch 2");
    assertThat(fetches).containsExactly(2L, 2L);
    assertThat(s.interrupted()).isTrue();

    later(Duration.ofMillis(2));
    s.onIdle(); // asks once more, then gives up
    assertThat(fetches).containsExactly(2L, 2L, 2L);
    assertThat(seen).containsExactly("batch 0", "batch 1", "batch 2", "restart 2->-1");
    assertThat(continuity).containsExactly("restart");
    assertThat(s.interrupted()).isFalse();

    s.onIdle();
    assertThat(fetches).hasSize(3); // given up: no more questions on idle
    buffer.clear();
    answering = true;
    buffered(0, 2, 1); // the rank is back as a new process
    s.onLive(0, payload(0, 1));
    s.onLive(1, payload(1, 1));
    assertThat(seen)
        .containsExactly("batch 0", "batch 1", "batch 2", "restart 2->-1", "batch 0", "batch 1");
    assertThat(continuity).containsExactly("restart");
  }

  @Test
  void anInterruptionPastTheLimit_whoseLastReplayAnswers_keepsTheBlocks() {
    StreamSequencer s = sequencer(true);
    live(s, 0, 3);
    s.onHealthLost(); // health checks fail for longer than the limit; the stream stays connected
    later(SETTINGS.giveUpAfter().plusMillis(1));
    s.onIdle(); // the replay proves the same process
    assertThat(fetches).containsExactly(2L);
    assertThat(seen).containsExactly("batch 0", "batch 1", "batch 2");
    assertThat(continuity).isEmpty();
    assertThat(s.interrupted()).isFalse();
  }

  @Test
  void afterAFailedHealthCheck_theSameStartTime_provesTheSameEngine_evenWithoutReplay() {
    StreamSequencer s = sequencer(false);
    s.onHealthy(1_700_000_000.5);
    live(s, 0, 3);
    s.onHealthLost();
    s.onHealthy(1_700_000_000.5);
    assertThat(s.interrupted()).isFalse();
    assertThat(continuity).isEmpty();
    s.onLive(3, payload(3));
    assertThat(seen).containsExactly("batch 0", "batch 1", "batch 2", "batch 3");
  }

  @Test
  void aChangedStartTime_isARestart_atOnce() {
    StreamSequencer s = sequencer(true);
    s.onHealthy(1_700_000_000.5);
    live(s, 0, 3);
    buffer.clear();
    s.onHealthy(1_700_000_042.0); // no failed check, no dropped connection seen
    assertThat(seen).containsExactly("batch 0", "batch 1", "batch 2", "restart 2->-1");
    assertThat(continuity).containsExactly("restart");
    assertThat(s.expected()).isZero();
  }

  @Test
  void aRestartFoundByReplay_thenTheNewProcessStartTime_isOneRestartNotTwo() {
    StreamSequencer s = sequencer(true);
    s.onHealthy(1_700_000_000.5);
    live(s, 0, 3);
    s.onDisconnected();
    buffer.clear();
    buffered(0, 1, 1);
    s.onLive(0, payload(0, 1)); // the replay shows another process first
    s.onHealthy(1_700_000_042.0); // then its start time arrives
    assertThat(continuity).containsExactly("restart");
    assertThat(seen).containsExactly("batch 0", "batch 1", "batch 2", "restart 2->-1", "batch 0");
  }

  @Test
  void aRestartFoundByReplay_thenAStaleReportOfTheOldStartTime_thenTheNewOne_isOneRestart() {
    StreamSequencer s = sequencer(true);
    s.onHealthy(1_700_000_000.5);
    live(s, 0, 3);
    s.audit(); // the engine's buffer holds what was delivered
    buffer.clear(); // the engine restarted and stayed idle
    s.audit();
    assertThat(continuity).containsExactly("restart");
    s.onHealthy(1_700_000_000.5); // a scrape of the old process, queued before its end was known
    s.onHealthy(1_700_000_042.0); // the new process's
    s.onHealthy(1_700_000_042.0);
    assertThat(continuity).containsExactly("restart");
    s.onHealthy(1_700_000_099.0); // and a later restart still shows
    assertThat(continuity).containsExactly("restart", "restart");
  }

  @Test
  void afterAFailedHealthCheck_nothingToProveItWithoutReplayOrStartTime_isACleanSlate() {
    StreamSequencer s = sequencer(false);
    live(s, 0, 3);
    s.onHealthLost();
    s.onHealthy(Double.NaN);
    assertThat(seen).containsExactly("batch 0", "batch 1", "batch 2", "restart 2->-1");
    assertThat(continuity).containsExactly("restart");
  }

  @Test
  void afterAFailedHealthCheck_anEngineWhoseStreamIsShorter_isARestart() {
    StreamSequencer s = sequencer(true);
    live(s, 0, 5);
    s.onHealthLost();
    buffer.clear();
    buffered(0, 2, 1);
    s.onHealthy(Double.NaN);
    assertThat(seen).containsSubsequence("batch 4", "restart 4->-1", "batch 0", "batch 1");
    assertThat(s.expected()).isEqualTo(2);
  }

  @Test
  void audit_findsARestartNoSignalShowed_anIdleNewEngineHasAShorterBuffer() {
    StreamSequencer s = sequencer(true);
    live(s, 0, 5);
    s.audit(); // the engine's buffer holds what was delivered
    assertThat(continuity).isEmpty();
    buffer.clear(); // the engine restarted and stayed idle
    s.onHealthy(Double.NaN);
    assertThat(seen).endsWith("restart 4->-1");
    assertThat(continuity).containsExactly("restart");
  }

  @Test
  void audit_findsARestartNoSignalShowed_aNewEngineThatRacedPastTheLastSeq() {
    StreamSequencer s = sequencer(true);
    live(s, 0, 3);
    buffer.clear();
    buffered(0, 6, 1);
    assertThat(s.audit()).isZero();
    assertThat(seen)
        .containsSubsequence("batch 2", "restart 2->-1", "batch 0", "batch 5")
        .noneMatch(x -> x.startsWith("gap"));
  }

  @Test
  void audit_ofAnEngineWhoseReplayNeverHeldAnything_judgesNothing() {
    StreamSequencer s = sequencer(true);
    for (long i = 0; i < 3; i++) {
      s.onLive(i, payload(i)); // a buffer that keeps nothing (buffer_steps 0)
    }
    assertThat(s.audit()).isZero();
    assertThat(continuity).isEmpty();
  }
}

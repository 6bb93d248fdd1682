package io.kvrouter.agent.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class StreamSequencerTest {

  /** What the handler saw, as strings. */
  private final List<String> seen = new ArrayList<>();

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

  /** A replay buffer holding some seqs. */
  private final TreeMap<Long, byte[]> buffer = new TreeMap<>();

  private final List<Long> fetches = new ArrayList<>();

  private List<TransportFrames.Message> fetch(long from) {
    fetches.add(from);
    List<TransportFrames.Message> out = new ArrayList<>();
    buffer.tailMap(from, true).forEach((s, p) -> out.add(new TransportFrames.Message(s, p)));
    return out;
  }

  private static byte[] payload(long seq) {
    return new VllmEventEncoder(EventEncoding.MAP).encode(new EngineEventBatch(seq, List.of(), 0));
  }

  private void buffered(long from, long to) {
    for (long s = from; s < to; s++) {
      buffer.put(s, payload(s));
    }
  }

  @Test
  void inOrderStream_isDeliveredWithoutReplay() {
    StreamSequencer s = new StreamSequencer(handler, this::fetch, "t");
    for (long i = 0; i < 3; i++) {
      s.onLive(i, payload(i));
    }
    assertThat(seen).containsExactly("batch 0", "batch 1", "batch 2");
    assertThat(fetches).isEmpty();
  }

  @Test
  void lateJoiner_replaysFromZeroBeforeTheFirstLiveBatch() {
    buffered(0, 5);
    StreamSequencer s = new StreamSequencer(handler, this::fetch, "t");
    s.onLive(5, payload(5));
    assertThat(fetches).containsExactly(0L);
    assertThat(seen)
        .containsExactly("batch 0", "batch 1", "batch 2", "batch 3", "batch 4", "batch 5");
  }

  @Test
  void gap_isFilledFromReplay_andWhatTheBufferLostIsReported() {
    StreamSequencer s = new StreamSequencer(handler, this::fetch, "t");
    s.onLive(0, payload(0));
    buffered(3, 6); // 1 and 2 fell out of the buffer
    s.onLive(6, payload(6));
    assertThat(fetches).containsExactly(1L);
    assertThat(seen)
        .containsExactly("batch 0", "gap 1..3", "batch 3", "batch 4", "batch 5", "batch 6");
  }

  @Test
  void gapWithoutReplaySocket_isUnrecoverable() {
    StreamSequencer s = new StreamSequencer(handler, null, "t");
    s.onLive(0, payload(0));
    s.onLive(3, payload(3));
    assertThat(seen).containsExactly("batch 0", "gap 1..3", "batch 3");
    assertThat(s.probe()).isZero();
  }

  @Test
  void regression_isAnEngineRestart_andTheNewStreamReplaysFromZero() {
    StreamSequencer s = new StreamSequencer(handler, this::fetch, "t");
    for (long i = 0; i < 4; i++) {
      s.onLive(i, payload(i));
    }
    buffer.clear();
    buffered(0, 2); // the new engine's first two batches, missed live
    s.onLive(2, payload(2));
    assertThat(seen)
        .containsSubsequence("batch 3", "restart 3->2", "batch 0", "batch 1", "batch 2");
    assertThat(s.expected()).isEqualTo(3);
  }

  @Test
  void probe_deliversWhatLiveMissed_andTheLateLiveCopiesAreNotARestart() {
    StreamSequencer s = new StreamSequencer(handler, this::fetch, "t");
    s.onLive(0, payload(0));
    buffered(0, 4);
    assertThat(s.probe()).isEqualTo(3);
    s.onLive(1, payload(1)); // live copies queued behind the probe
    s.onLive(2, payload(2));
    s.onLive(4, payload(4));
    assertThat(seen).containsExactly("batch 0", "batch 1", "batch 2", "batch 3", "batch 4");
  }

  @Test
  void undecodablePayload_isCountedAndSkippedWithoutStallingTheSequence() {
    StreamSequencer s = new StreamSequencer(handler, this::fetch, "t");
    s.onLive(0, new byte[] {(byte) 0xc1});
    s.onLive(1, payload(1));
    assertThat(s.malformed()).isEqualTo(1);
    assertThat(seen).containsExactly("batch 1");
    assertThat(fetches).isEmpty();
  }

  @Test
  void afterADisconnect_aBatchAheadOfTheExpectedOne_isARestart_andTheNewEngineIsReplayedFromZero() {
    StreamSequencer s = new StreamSequencer(handler, this::fetch, "t");
    for (long i = 0; i < 3; i++) {
      s.onLive(i, payload(i));
    }
    s.onDisconnected();
    buffer.clear();
    buffered(0, 7); // the restarted engine already published 0..6 before we reconnected
    s.onLive(7, payload(7));

    assertThat(seen)
        .containsSubsequence("batch 2", "restart 2->7", "batch 0", "batch 6", "batch 7");
    assertThat(fetches).containsExactly(0L);
  }

  @Test
  void afterADisconnect_theExpectedBatch_isACarryOn() {
    StreamSequencer s = new StreamSequencer(handler, this::fetch, "t");
    s.onLive(0, payload(0));
    s.onDisconnected();
    s.onLive(1, payload(1));
    assertThat(seen).containsExactly("batch 0", "batch 1");
  }
}

package io.kvrouter.tracker.feed;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.tracker.feed.EventSequencer.Outcome;
import org.junit.jupiter.api.Test;

class EventSequencerTest {

  @Test
  void firstBatchAtSeqZero_isApplied_thenEachNextOne() {
    EventSequencer s = new EventSequencer();
    assertThat(s.admit("a", 1, 0).outcome()).isEqualTo(Outcome.APPLY);
    assertThat(s.admit("a", 1, 1).outcome()).isEqualTo(Outcome.APPLY);
    assertThat(s.watermark("a")).isEqualTo(new EventSequencer.Watermark(1, 1));
  }

  @Test
  void lateJoiner_seeingSeqAboveZero_reportsAGapFromZero() {
    EventSequencer.Verdict v = new EventSequencer().admit("a", 1, 5);
    assertThat(v.outcome()).isEqualTo(Outcome.GAP);
    assertThat(v.expectedSeq()).isZero();
    assertThat(v.clearFirst()).isFalse();
  }

  @Test
  void duplicateAndStaleEpoch_areIgnored_withoutMovingTheWatermark() {
    EventSequencer s = new EventSequencer();
    s.admit("a", 2, 0);
    s.admit("a", 2, 1);
    assertThat(s.admit("a", 2, 1).outcome()).isEqualTo(Outcome.DUPLICATE);
    assertThat(s.admit("a", 1, 7).outcome()).isEqualTo(Outcome.STALE);
    assertThat(s.watermark("a")).isEqualTo(new EventSequencer.Watermark(2, 1));
  }

  @Test
  void gap_isNotApplied_andNamesTheSeqToReplayFrom() {
    EventSequencer s = new EventSequencer();
    s.admit("a", 1, 0);
    EventSequencer.Verdict v = s.admit("a", 1, 3);
    assertThat(v.outcome()).isEqualTo(Outcome.GAP);
    assertThat(v.expectedSeq()).isEqualTo(1);
    assertThat(s.admit("a", 1, 1).outcome()).isEqualTo(Outcome.APPLY);
  }

  @Test
  void laterEpoch_clearsFirst_whetherItStartsAtZeroOrWithAGap() {
    EventSequencer s = new EventSequencer();
    s.admit("a", 1, 0);
    EventSequencer.Verdict restart = s.admit("a", 2, 0);
    assertThat(restart.outcome()).isEqualTo(Outcome.NEW_EPOCH);
    assertThat(restart.clearFirst()).isTrue();
    EventSequencer.Verdict gapped = s.admit("a", 3, 4);
    assertThat(gapped.outcome()).isEqualTo(Outcome.GAP);
    assertThat(gapped.clearFirst()).isTrue();
    assertThat(gapped.expectedSeq()).isZero();
    assertThat(s.admit("a", 3, 0).outcome()).isEqualTo(Outcome.APPLY);
  }

  @Test
  void reset_afterASnapshot_continuesFromTheSnapshotsSeq() {
    EventSequencer s = new EventSequencer();
    s.reset("a", 4, 99);
    assertThat(s.admit("a", 4, 100).outcome()).isEqualTo(Outcome.APPLY);
  }
}

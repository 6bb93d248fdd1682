package io.kvrouter.ingress.traffic;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class UsageJudgeTest {

  static final long MINUTE = 60_000;
  static final UsageJudge.Counts NOTHING = new UsageJudge.Counts(0, 0, 0, 0);

  static List<Long> requests(int n, long tokens) {
    return new ArrayList<>(Collections.nCopies(n, tokens));
  }

  @Test
  void requestsBeyondTheRequestLimit_areRefused_namingIt() {
    Tenant t = new Tenant("acme", 3, 0, 1, null);
    UsageJudge.Round round = UsageJudge.judge(t, NOTHING, 0, MINUTE, requests(5, 10));

    assertThat(round.verdicts())
        .extracting(LimitVerdict::allowed)
        .containsExactly(true, true, true, false, false);
    assertThat(round.admittedRequests()).isEqualTo(3);
    assertThat(round.admittedTokens()).isEqualTo(30);
    assertThat(round.verdicts())
        .extracting(v -> v.requests().remaining())
        .containsExactly(2L, 1L, 0L, 0L, 0L);
    LimitVerdict refused = round.verdicts().get(3);
    assertThat(refused.exceeded()).isEqualTo("requests");
    assertThat(refused.requests().used()).isEqualTo(3);
    assertThat(refused.requests().resetMillis())
        .as("the rest of this minute, then a third of the next (3·(1 − f) ≤ 2 at f = 1/3)")
        .isEqualTo(60_000 + 20_000);
    assertThat(refused.tokens()).isEqualTo(LimitVerdict.Standing.NONE);
  }

  @Test
  void requestsBeyondTheTokenLimit_areRefused_namingIt() {
    Tenant t = new Tenant("acme", 0, 1000, 1, null);
    UsageJudge.Round round = UsageJudge.judge(t, NOTHING, 0, MINUTE, requests(4, 300));
    assertThat(round.verdicts())
        .extracting(LimitVerdict::allowed)
        .containsExactly(true, true, true, false);
    assertThat(round.verdicts().get(3).exceeded()).isEqualTo("tokens");
    assertThat(round.verdicts().get(2).tokens().remaining()).isEqualTo(100);
  }

  @Test
  void thePreviousWindow_countsByHowMuchOfItStillOverlapsTheLastMinute() {
    Tenant t = new Tenant("acme", 10, 0, 1, null);
    UsageJudge.Counts previous = new UsageJudge.Counts(0, 10, 0, 0);
    assertThat(
            UsageJudge.judge(t, previous, MINUTE / 2, MINUTE, requests(10, 1)).admittedRequests())
        .isEqualTo(5);
    assertThat(
            UsageJudge.judge(t, previous, MINUTE / 10, MINUTE, requests(10, 1)).admittedRequests())
        .isEqualTo(1);
  }

  /**
   * The owner's rounds, one after the other, each on counts that include the rounds before: however
   * the waiting requests are cut into rounds, exactly the limit gets through.
   */
  @Test
  void successiveRoundsOnCountsIncludingTheEarlierOnes_admitExactlyTheLimit() {
    for (long limit = 1; limit <= 40; limit++) {
      Tenant t = new Tenant("acme", limit, 0, 1, null);
      long counted = 0;
      for (int round = 0; round < 30; round++) {
        counted +=
            UsageJudge.judge(
                    t,
                    new UsageJudge.Counts(counted, 0, 0, 0),
                    0,
                    MINUTE,
                    requests(1 + round % 4, 1))
                .admittedRequests();
      }
      assertThat(counted).as("limit %d", limit).isEqualTo(limit);
    }
  }

  @Test
  void millisUntilFits_waitsForThePreviousWindowToFade_orForTheNextWindow() {
    // 5 used before, nothing now, limit 5: at 20% into the window the estimate is 4, so one more
    // fits now.
    assertThat(UsageWindow.millisUntilFits(5, 0, 5, 1, 12_000, MINUTE)).isZero();
    // limit 4: one fits when 5·(1 − f) ≤ 3, at f = 0.4, 12 s after now.
    assertThat(UsageWindow.millisUntilFits(4, 0, 5, 1, 12_000, MINUTE)).isEqualTo(12_000);
    // full in the current window: the rest of it, then until the current count fades enough.
    assertThat(UsageWindow.millisUntilFits(4, 4, 0, 1, 15_000, MINUTE)).isEqualTo(45_000 + 15_000);
    assertThat(UsageWindow.millisUntilFits(4, 0, 0, 5, 0, MINUTE))
        .as("never fits")
        .isEqualTo(2 * MINUTE);
  }
}

package io.kvrouter.tracker.index;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class RunSummaryTest {

  /** A summary for a node table of 4,096 slots: 2,048 member slots, 2,048 claim slots. */
  private static RunSummary summary() {
    RunSummary summary = new RunSummary(2);
    summary.sizeFor(4096);
    return summary;
  }

  /** {@code claims} runs of two random keys each, claimed for replica 3. */
  private static long[][] claimAll(RunSummary summary, int claims) {
    SplittableRandom random = new SplittableRandom(7);
    long[][] runs = new long[claims][];
    for (int c = 0; c < claims; c++) {
      runs[c] = new long[] {random.nextLong() | 1, random.nextLong() | 1};
      summary.claim(RunSummary.runKey(runs[c], 0, 2), 3, runs[c], 0, 2);
    }
    return runs;
  }

  @Test
  void claimsFillingThreeEighthsOfTheMemberSlots_allSurvive_becauseAFullBucketSpillsOver() {
    // 768 members over 256 buckets of eight (the member load of the tracker's 128k benchmark):
    // with one bucket per member, two of these claims lost a member to a full bucket and died (as
    // a tenth of a 128k prompt's claims did before every match in the benchmark, where each match
    // re-claims what it walked and evicts more); a second bucket keeps them all.
    RunSummary summary = summary();
    long[][] runs = claimAll(summary, 384);

    assertThat(summary.claims()).isEqualTo(384);
    for (long[] run : runs) {
      assertThat(summary.holds(RunSummary.runKey(run, 0, 2), 3)).isTrue();
    }
  }

  @Test
  void losingAnyBlockOfAClaimedRun_endsItsClaim_whicheverBucketItsMemberWentTo() {
    RunSummary summary = summary();
    long[][] runs = claimAll(summary, 384);

    for (int c = 0; c < runs.length; c++) {
      summary.lost(runs[c][c % 2], 3);
      assertThat(summary.holds(RunSummary.runKey(runs[c], 0, 2), 3)).as("run %d", c).isFalse();
    }
    assertThat(summary.claims()).isZero();
  }

  @Test
  void losingABlockOnAnotherReplica_leavesTheClaimAlone() {
    RunSummary summary = summary();
    long[][] runs = claimAll(summary, 64);

    for (long[] run : runs) {
      summary.lost(run[0], 4);
    }
    assertThat(summary.claims()).isEqualTo(64);
  }
}

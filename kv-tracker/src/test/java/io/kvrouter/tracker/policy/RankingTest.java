package io.kvrouter.tracker.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class RankingTest {

  /**
   * The primitive merge sort orders exactly as a stable boxed sort by (cost, tie draw) does, with
   * the same draws: costs from a small set so that ties are common, including infinities and NaN.
   */
  @Property(tries = 300)
  void ascending_ordersAsAStableSortByCostThenTieDraw(
      @ForAll @IntRange(min = 0, max = 200) int n, @ForAll long seed) {
    SplittableRandom values = new SplittableRandom(seed);
    double[] palette = {0, 1, 2.5, -3, Double.POSITIVE_INFINITY, Double.NaN, 1e-9};
    int[] candidates = new int[n];
    double[] cost = new double[n];
    for (int i = 0; i < n; i++) {
      candidates[i] = 1000 + values.nextInt(5000);
      cost[i] = palette[values.nextInt(palette.length)];
    }
    long drawSeed = values.nextLong();
    boolean noRandomness = values.nextBoolean();
    RandomGenerator forRanking =
        noRandomness ? Ranking.NO_RANDOMNESS : new SplittableRandom(drawSeed);
    RandomGenerator forReference =
        noRandomness ? Ranking.NO_RANDOMNESS : new SplittableRandom(drawSeed);

    assertThat(Ranking.ascending(candidates, cost, forRanking))
        .containsExactly(reference(candidates, cost, forReference));
  }

  @Test
  void exactTies_withoutRandomness_keepTheCandidatesOrder() {
    int[] candidates = {7, 3, 9, 1, 4};
    double[] cost = {2, 1, 2, 1, 2};
    assertThat(Ranking.ascending(candidates, cost, Ranking.NO_RANDOMNESS))
        .containsExactly(3, 1, 7, 9, 4);
  }

  /** What {@code ascending} did before: a boxed, stable sort with a comparator. */
  private static int[] reference(int[] candidates, double[] cost, RandomGenerator random) {
    int n = candidates.length;
    double[] tie = new double[n];
    for (int i = 0; i < n; i++) {
      tie[i] = random.nextDouble();
    }
    Integer[] idx = new Integer[n];
    for (int i = 0; i < n; i++) {
      idx[i] = i;
    }
    Arrays.sort(
        idx,
        (a, b) -> {
          int c = Double.compare(cost[a], cost[b]);
          return c != 0 ? c : Double.compare(tie[a], tie[b]);
        });
    int[] out = new int[n];
    for (int i = 0; i < n; i++) {
      out[i] = candidates[idx[i]];
    }
    return out;
  }
}

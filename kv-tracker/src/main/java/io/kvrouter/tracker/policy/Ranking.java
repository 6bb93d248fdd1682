package io.kvrouter.tracker.policy;

import java.util.random.RandomGenerator;

/** Sorting helpers shared by the policies: order by a score, ties broken at random. */
public final class Ranking {

  private Ranking() {}

  /** A generator that always draws the same value: exact ties keep the candidates' order. */
  public static final java.util.random.RandomGenerator NO_RANDOMNESS = () -> 0L;

  /**
   * Candidates by ascending {@code cost[i]} (cost indexed like {@code candidates}); equal costs in
   * random order (one draw per candidate, in candidate order). O(n log n) on primitive arrays: a
   * stable merge sort of indices, so exact ties under {@link #NO_RANDOMNESS} keep their order, as
   * the boxed {@code Arrays.sort} this replaces did (it was a quarter of a 64-replica decision).
   */
  public static int[] ascending(int[] candidates, double[] cost, RandomGenerator random) {
    int n = candidates.length;
    double[] tie = new double[n];
    for (int i = 0; i < n; i++) {
      tie[i] = random.nextDouble();
    }
    int[] idx = new int[n];
    for (int i = 0; i < n; i++) {
      idx[i] = i;
    }
    mergeSort(idx, new int[n], 0, n, cost, tie);
    int[] out = new int[n];
    for (int i = 0; i < n; i++) {
      out[i] = candidates[idx[i]];
    }
    return out;
  }

  /** Sorts {@code idx[from, to)} by (cost, tie), stably, using {@code tmp} as scratch. */
  private static void mergeSort(
      int[] idx, int[] tmp, int from, int to, double[] cost, double[] tie) {
    if (to - from < 2) {
      return;
    }
    int mid = (from + to) >>> 1;
    mergeSort(idx, tmp, from, mid, cost, tie);
    mergeSort(idx, tmp, mid, to, cost, tie);
    if (!before(idx[mid], idx[mid - 1], cost, tie)) {
      return;
    }
    System.arraycopy(idx, from, tmp, from, to - from);
    int i = from;
    int j = mid;
    for (int k = from; k < to; k++) {
      if (j >= to || (i < mid && !before(tmp[j], tmp[i], cost, tie))) {
        idx[k] = tmp[i++];
      } else {
        idx[k] = tmp[j++];
      }
    }
  }

  /** True when index {@code a} sorts strictly before {@code b}. */
  private static boolean before(int a, int b, double[] cost, double[] tie) {
    int c = Double.compare(cost[a], cost[b]);
    return c != 0 ? c < 0 : Double.compare(tie[a], tie[b]) < 0;
  }

  /** Candidates by descending score, ties random. */
  public static int[] descending(int[] candidates, double[] score, RandomGenerator random) {
    double[] cost = new double[score.length];
    for (int i = 0; i < score.length; i++) {
      cost[i] = -score[i];
    }
    return ascending(candidates, cost, random);
  }

  /** {@code ranked} with {@code first} moved to the front. */
  public static int[] withFirst(int[] ranked, int first) {
    int[] out = new int[ranked.length];
    out[0] = first;
    int j = 1;
    for (int r : ranked) {
      if (r != first) {
        out[j++] = r;
      }
    }
    return out;
  }

  /**
   * Samples an index with probability proportional to {@code exp(-(cost[i] - min) / scale)}; {@code
   * scale <= 0} returns the argmin (first of equals at random).
   */
  public static int softmin(double[] cost, double scale, RandomGenerator random) {
    double min = Double.POSITIVE_INFINITY;
    for (double c : cost) {
      min = Math.min(min, c);
    }
    double[] w = new double[cost.length];
    double total = 0;
    for (int i = 0; i < cost.length; i++) {
      w[i] = scale <= 0 ? (cost[i] == min ? 1 : 0) : Math.exp(-(cost[i] - min) / scale);
      total += w[i];
    }
    double x = random.nextDouble() * total;
    for (int i = 0; i < w.length; i++) {
      x -= w[i];
      if (x < 0 && w[i] > 0) {
        return i;
      }
    }
    for (int i = w.length - 1; i >= 0; i--) {
      if (w[i] > 0) {
        return i;
      }
    }
    return 0;
  }
}

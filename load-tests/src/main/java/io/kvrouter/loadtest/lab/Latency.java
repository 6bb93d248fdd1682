package io.kvrouter.loadtest.lab;

import java.util.Arrays;

/**
 * Percentiles of a latency sample in milliseconds (nearest rank on the sorted sample).
 *
 * @param p50 median
 * @param p90 90th percentile
 * @param p99 99th percentile
 * @param mean mean
 */
public record Latency(double p50, double p90, double p99, double mean) {

  /** Summary of {@code millis} (sorted in place); all zero for an empty sample. O(n log n). */
  public static Latency of(double[] millis) {
    if (millis.length == 0) {
      return new Latency(0, 0, 0, 0);
    }
    Arrays.sort(millis);
    double sum = 0;
    for (double v : millis) {
      sum += v;
    }
    return new Latency(
        rank(millis, 0.50), rank(millis, 0.90), rank(millis, 0.99), sum / millis.length);
  }

  private static double rank(double[] sorted, double q) {
    int i = (int) Math.ceil(q * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
  }
}

package io.kvrouter.loadtest.bench;

import org.HdrHistogram.Histogram;

/**
 * Percentiles of one latency metric in milliseconds. All zero when {@code count} is 0. Values come
 * from an HdrHistogram with three significant digits and are reported, as HdrHistogram does, as the
 * highest value equivalent to the recorded one (at most 0.1% above it).
 *
 * @param count number of values
 * @param p50 median
 * @param p90 90th percentile
 * @param p99 99th percentile
 * @param max largest value
 * @param mean arithmetic mean
 */
public record LatencySummary(
    long count, double p50, double p90, double p99, double max, double mean) {

  /** Values in microseconds, three significant digits, auto-resizing: enough for hours. */
  static Histogram newHistogram() {
    return new Histogram(3);
  }

  /** Records {@code nanos} (clamped at 0) in microseconds. */
  static void record(Histogram h, long nanos) {
    h.recordValue(Math.max(0, nanos) / 1_000);
  }

  /** The summary of a histogram of microsecond values. */
  static LatencySummary of(Histogram h) {
    if (h.getTotalCount() == 0) {
      return new LatencySummary(0, 0, 0, 0, 0, 0);
    }
    return new LatencySummary(
        h.getTotalCount(),
        ms(h.getValueAtPercentile(50)),
        ms(h.getValueAtPercentile(90)),
        ms(h.getValueAtPercentile(99)),
        ms(h.getMaxValue()),
        Math.round(h.getMean()) / 1000.0);
  }

  private static double ms(long micros) {
    return micros / 1000.0;
  }
}

package io.kvrouter.ingress.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/** The latency timers of the ingress's metrics: each with a percentile histogram over a range. */
public final class LatencyTimers {

  private LatencyTimers() {}

  /**
   * The timer {@code name} in {@code registry} (registered on first use) with a percentile
   * histogram from {@code least} to {@code most}.
   */
  public static Timer histogram(
      MeterRegistry registry, String name, String description, Duration least, Duration most) {
    return Timer.builder(name)
        .description(description)
        .publishPercentileHistogram()
        .minimumExpectedValue(least)
        .maximumExpectedValue(most)
        .register(registry);
  }
}

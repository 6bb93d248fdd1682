package io.kvrouter.loadtest.bench;

import java.time.Instant;
import java.util.List;

/**
 * The raw record of one run: every request's outcome plus the engine scrapes around it. Turn it
 * into figures with {@link BenchSummary#of}.
 *
 * @param config the configuration the run used
 * @param model the model actually sent (discovered if the config named none)
 * @param workload the source's name
 * @param startedAt wall-clock start
 * @param durationNanos start of the run to the last request's end (or to the last issue if later)
 * @param outcomes one per request taken from the source, in issue order
 * @param enginesBefore scrapes before the first request, one per engine URL
 * @param enginesAfter scrapes after the last request ended, same order
 * @param stoppedEarly whether {@link BenchRunner#stop()} cut the run short
 */
public record BenchRun(
    BenchConfig config,
    String model,
    String workload,
    Instant startedAt,
    long durationNanos,
    List<RequestOutcome> outcomes,
    List<EngineSnapshot> enginesBefore,
    List<EngineSnapshot> enginesAfter,
    boolean stoppedEarly) {

  public BenchRun {
    outcomes = List.copyOf(outcomes);
    enginesBefore = List.copyOf(enginesBefore);
    enginesAfter = List.copyOf(enginesAfter);
  }
}

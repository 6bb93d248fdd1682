package io.kvrouter.ingress.program;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Program meters ({@code kvrouter_program_*} in {@code /metrics}): turns by kind, warming outcomes,
 * and the prompt tokens of continuing turns with those the engine did not find cached. Label values
 * come from fixed sets. Thread-safe.
 */
final class ProgramMetrics {

  private final MeterRegistry registry;

  ProgramMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  /**
   * A warming of a next turn ended: {@code warmed}, {@code skipped_no_headroom}, {@code
   * skipped_not_idle} (its replica serves other requests), {@code skipped_too_long} (more of it
   * uncached than a warm may prefill), {@code skipped_unbound} (no replica known for the program),
   * {@code skipped_moved} (its replica is gone), {@code cancelled} (the next turn came first),
   * {@code failed}.
   */
  void warm(String outcome) {
    Counter.builder("kvrouter.program.warm")
        .description("Prefills of a program's next turn after a reply that ended in a tool call")
        .tag("outcome", outcome)
        .register(registry)
        .increment();
  }

  /** A program's turn was answered: {@code new} (its first here) or {@code continuing}. */
  void turn(String kind) {
    Counter.builder("kvrouter.program.turns")
        .description("Answered turns of identified programs")
        .tag("kind", kind)
        .register(registry)
        .increment();
  }

  /**
   * A turn that continues after a tool call was answered with {@code prompt} prompt tokens, of
   * which {@code missing} were not cached; {@code warmed}: its prefix had been warmed.
   */
  void continuing(int prompt, int missing, boolean warmed) {
    String w = warmed ? "true" : "false";
    Counter.builder("kvrouter.program.continuing.prompt.tokens")
        .description("Prompt tokens of turns that continue after a tool call")
        .tag("warmed", w)
        .register(registry)
        .increment(prompt);
    Counter.builder("kvrouter.program.continuing.missing.tokens")
        .description("Prompt tokens of such turns the engine did not find cached")
        .tag("warmed", w)
        .register(registry)
        .increment(missing);
  }
}

package io.kvrouter.cli.dev;

import io.kvrouter.loadtest.bench.ArrivalSchedule;
import io.kvrouter.loadtest.bench.BenchEndpoint;
import io.kvrouter.loadtest.bench.BenchRequestSource;
import io.kvrouter.loadtest.bench.SyntheticWorkloads;
import io.kvrouter.loadtest.bench.WorkloadSource;
import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.Workloads;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * {@code kvrouter bench}'s workload options: which prompts (a built-in text workload, a workload of
 * the workload package, or a trace), how many, and when they are due (their own times, a Poisson
 * rate or bursts); {@link #source} turns them into the runner's request source.
 */
final class BenchWorkloadOptions {

  @Option(
      names = "--workload",
      defaultValue = "shared-prefix",
      description =
          "shared-prefix or random (built in, text prompts), or a workload of the workload package: "
              + "mooncake-conversation, mooncake-synthetic, sglang-gsp, llmd-b2b, multi-turn-chat (token-id prompts, "
              + "completions endpoint) (default: ${DEFAULT-VALUE}).")
  String workload;

  @Option(
      names = "--workload-param",
      paramLabel = "KEY=VALUE",
      description =
          "A parameter of a workload-package workload, e.g. groups=16 or path=trace.jsonl; repeatable.")
  Map<String, String> workloadParams = new LinkedHashMap<>();

  @Option(
      names = "--trace",
      paramLabel = "FILE",
      description =
          "Replay a Mooncake-format trace file (JSONL) at its own timestamps; overrides --workload.")
  Path trace;

  @Option(
      names = "--speed-up",
      defaultValue = "1",
      description =
          "Divide the arrival times of a trace or workload-package workload by this (default: ${DEFAULT-VALUE}).")
  double speedUp;

  @Option(
      names = "--vocab-size",
      defaultValue = "0",
      description =
          "Fold synthetic token ids below this (modulo) for models with a smaller vocabulary; 0 keeps them (default: ${DEFAULT-VALUE}).")
  int vocabSize;

  @Option(
      names = "--requests",
      description =
          "Requests to send at most (default: all of the workload; for random 100, or one burst).")
  Integer requests;

  @Option(
      names = "--rate",
      defaultValue = "4",
      description = "Poisson arrival rate, requests per second (default: ${DEFAULT-VALUE}).")
  double rate;

  @Option(
      names = "--burst",
      description = "Send bursts of N requests at the same instant instead of Poisson arrivals.")
  Integer burst;

  @Option(
      names = "--burst-interval",
      defaultValue = "1",
      description = "Seconds between bursts (default: ${DEFAULT-VALUE}).")
  double burstInterval;

  @Option(
      names = "--max-tokens",
      defaultValue = "64",
      description =
          "max_tokens per request of the built-in workloads; others carry their own (default: ${DEFAULT-VALUE}).")
  int maxTokens;

  @Option(
      names = "--seed",
      defaultValue = "42",
      description = "Seed for prompts and arrivals (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(
      names = "--groups",
      defaultValue = "8",
      description = "shared-prefix: number of prefix groups (default: ${DEFAULT-VALUE}).")
  int groups;

  @Option(
      names = "--prompts-per-group",
      defaultValue = "16",
      description = "shared-prefix: prompts per group (default: ${DEFAULT-VALUE}).")
  int promptsPerGroup;

  @Option(
      names = "--prefix-words",
      defaultValue = "300",
      description = "shared-prefix: words in the shared prefix (default: ${DEFAULT-VALUE}).")
  int prefixWords;

  @Option(
      names = "--suffix-words",
      defaultValue = "30",
      description =
          "Words after the prefix (shared-prefix) or in the whole prompt (random: prefix + suffix words) (default: ${DEFAULT-VALUE}).")
  int suffixWords;

  /**
   * The request source the options describe.
   *
   * @param spec the command, for its error messages and to tell whether {@code --rate} was given
   * @param endpoint the endpoint requests go to (workload-package workloads need completions)
   */
  BenchRequestSource source(CommandSpec spec, BenchEndpoint endpoint) {
    if (burst != null && burst < 1) {
      throw new ParameterException(spec.commandLine(), "--burst must be >= 1");
    }
    if (burst == null && !(rate > 0)) {
      throw new ParameterException(spec.commandLine(), "--rate must be positive");
    }
    try {
      ArrivalSchedule arrivals =
          burst != null
              ? ArrivalSchedule.bursts(
                  burst, seconds(spec, burstInterval, "--burst-interval").toNanos())
              : ArrivalSchedule.poisson(rate, seed);
      switch (workload) {
        case "shared-prefix":
          if (trace == null) {
            return SyntheticWorkloads.sharedPrefix(
                groups, promptsPerGroup, prefixWords, suffixWords, maxTokens, arrivals, seed);
          }
          break;
        case "random":
          if (trace == null) {
            return SyntheticWorkloads.random(
                requests != null ? requests : burst != null ? burst : 100,
                prefixWords + suffixWords,
                maxTokens,
                arrivals,
                seed);
          }
          break;
        default:
          break;
      }
      if (endpoint != BenchEndpoint.COMPLETIONS) {
        throw new ParameterException(
            spec.commandLine(),
            "workload-package workloads and traces send token ids: use --endpoint completions");
      }
      if (!(speedUp > 0)) {
        throw new ParameterException(spec.commandLine(), "--speed-up must be positive");
      }
      Workload w =
          trace != null
              ? Workloads.fromTrace(trace, seed)
              : Workloads.byName(workload, workloadParams, seed);
      if (speedUp != 1.0) {
        w = w.speedUp(speedUp);
      }
      // The workload's own arrival times, unless the user asked for a rate or bursts explicitly.
      boolean ownTimes =
          !spec.commandLine().getParseResult().hasMatchedOption("--rate") && burst == null;
      return WorkloadSource.of(w, ownTimes ? null : arrivals, vocabSize);
    } catch (ParameterException e) {
      throw e;
    } catch (RuntimeException e) { // bad parameters, unreadable or malformed trace
      throw new ParameterException(
          spec.commandLine(), "cannot build the workload: " + e.getMessage(), e);
    }
  }

  /** {@code s} seconds as a duration; a negative, NaN or infinite value is a usage error. */
  static Duration seconds(CommandSpec spec, double s, String flag) {
    if (!(s >= 0) || Double.isInfinite(s)) {
      throw new ParameterException(spec.commandLine(), flag + " must be a number of seconds >= 0");
    }
    return Duration.ofNanos((long) (s * 1e9));
  }
}

package io.kvrouter.cli.dev;

import io.kvrouter.loadtest.bench.PickerBench;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code kvrouter bench picker}: the flags of a {@link PickerBench} run, which plays Envoy against
 * an ingress's ext_proc endpoint picker and prints each round's decision time, errors and the
 * picker's CPU per decision.
 */
@Command(
    name = "picker",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description =
        "Open-loop load on an ext_proc endpoint picker, played as Envoy plays it (one gRPC stream"
            + " per request); reports decision time, errors and the picker's CPU per decision.")
final class PickerBenchCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(
      names = "--target",
      defaultValue = "127.0.0.1:9002",
      description = "The picker's ext_proc host:port (default: ${DEFAULT-VALUE}).")
  String target;

  @Option(
      names = "--pid",
      defaultValue = "0",
      description =
          "The picker's process id: its CPU per decision from /proc (Linux); 0 = not measured.")
  long pid;

  @Option(
      names = "--rate",
      defaultValue = "200",
      description = "Decisions per second, open loop (default: ${DEFAULT-VALUE}).")
  double rate;

  @Option(
      names = "--decisions",
      defaultValue = "3000",
      description = "Decisions per measured round (default: ${DEFAULT-VALUE}).")
  int decisions;

  @Option(
      names = "--warmup",
      defaultValue = "3000",
      description = "Decisions of each unmeasured warm-up round (default: ${DEFAULT-VALUE}).")
  int warmup;

  @Option(
      names = "--warmup-rounds",
      defaultValue = "5",
      description =
          "Most warm-up rounds: with --pid they go on until the picker's JIT compiler threads take"
              + " under 0.05 ms per decision (default: ${DEFAULT-VALUE}).")
  int warmupRounds;

  @Option(
      names = "--rounds",
      defaultValue = "1",
      description = "Measured rounds (default: ${DEFAULT-VALUE}).")
  int rounds;

  @Option(
      names = "--tokens",
      defaultValue = "1024",
      description = "Prompt tokens per chat request, o200k (default: ${DEFAULT-VALUE}).")
  int tokens;

  @Option(
      names = "--groups",
      defaultValue = "16",
      description = "Shared-prefix groups (default: ${DEFAULT-VALUE}).")
  int groups;

  @Option(
      names = "--prefix-share",
      defaultValue = "0.75",
      description = "Share of each prompt its group shares (default: ${DEFAULT-VALUE}).")
  double prefixShare;

  @Option(
      names = "--model",
      defaultValue = "kvrouter-demo",
      description = "Model named in the bodies (default: ${DEFAULT-VALUE}).")
  String model;

  @Option(
      names = "--chunk-bytes",
      defaultValue = "16384",
      description = "Largest request body chunk sent to the picker (default: ${DEFAULT-VALUE}).")
  int chunkBytes;

  @Option(
      names = "--timeout",
      defaultValue = "10",
      description =
          "Seconds a round waits for its streams after the last send (default: ${DEFAULT-VALUE}).")
  double timeout;

  @Option(
      names = "--seed",
      defaultValue = "1",
      description = "Seed of the prompts (default: ${DEFAULT-VALUE}).")
  long seed;

  @Override
  public Integer call() throws Exception {
    int colon = target.lastIndexOf(':');
    if (colon <= 0) {
      throw new ParameterException(spec.commandLine(), "--target is host:port, not " + target);
    }
    PickerBench.Settings settings;
    try {
      settings =
          new PickerBench.Settings(
              target.substring(0, colon),
              Integer.parseInt(target.substring(colon + 1)),
              pid,
              rate,
              decisions,
              warmup,
              warmupRounds,
              rounds,
              new PickerBench.WorkloadShape(model, tokens, groups, prefixShare, seed),
              chunkBytes,
              BenchWorkloadOptions.seconds(spec, timeout, "--timeout"));
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
    List<PickerBench.Round> rounds = PickerBench.run(settings, System.out);
    System.out.println();
    System.out.println(PickerBench.markdownHeader());
    String label =
        String.format(
            "%,d tokens @ %s/s",
            tokens,
            new java.math.BigDecimal(Double.toString(rate)).stripTrailingZeros().toPlainString());
    rounds.forEach(r -> System.out.println(PickerBench.markdownRow(label, r)));
    return rounds.stream().allMatch(r -> r.ok() == r.sent()) ? 0 : 1;
  }
}

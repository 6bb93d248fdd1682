package io.kvrouter.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** {@code kvrouter bench}. */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    description = "Open-loop HTTP load generator for any OpenAI-compatible endpoint; reports TTFT, ITL, end-to-end latency and engine hit rate.")
final class BenchCommand implements Callable<Integer> {

  @Override
  public Integer call() {
    System.err.println("kvrouter bench: not implemented yet");
    return 2;
  }
}

package io.kvrouter.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** {@code kvrouter demo}. */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = "Run a whole kvrouter cluster in one process: 2 ingress nodes and 4 simulated vLLM engines with their agents.")
final class DemoCommand implements Callable<Integer> {

  @Override
  public Integer call() {
    System.err.println("kvrouter demo: not implemented yet");
    return 2;
  }
}

package io.kvrouter.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** {@code kvrouter lab}. */
@Command(
    name = "lab",
    mixinStandardHelpOptions = true,
    description = "Replay a workload in virtual time against simulated engines, for every routing policy side by side.")
final class LabCommand implements Callable<Integer> {

  @Override
  public Integer call() {
    System.err.println("kvrouter lab: not implemented yet");
    return 2;
  }
}

package io.kvrouter.cli.dev;

import io.kvrouter.cli.IngressCommand;
import io.kvrouter.cli.NodeMain;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The full {@code kvrouter} command ({@code ./kvrouter}): the node's ingress and agent, plus the
 * demo, the simulated engine, the lab and the bench, one subcommand per job.
 */
@Command(
    name = "kvrouter",
    mixinStandardHelpOptions = true,
    versionProvider = NodeMain.Version.class,
    description = "KV-cache-aware request router for LLM inference clusters.",
    subcommands = {
      DemoCommand.class,
      IngressCommand.class,
      SimAgentCommand.class,
      SimEngineCommand.class,
      LabCommand.class,
      BenchCommand.class,
      CommandLine.HelpCommand.class
    })
public final class Main implements Runnable {

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    NodeMain.launch(commandLine(), args);
  }

  /** The configured command line, for tests. */
  public static CommandLine commandLine() {
    return NodeMain.configured(new Main());
  }

  @Override
  public void run() {
    spec.commandLine().usage(System.out);
  }
}

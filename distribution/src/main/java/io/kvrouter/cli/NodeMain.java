package io.kvrouter.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The node's {@code kvrouter} command, as the production image runs it: an ingress or a replica
 * agent. The full command ({@code io.kvrouter.cli.dev.Main}) adds the demo, the simulated engine,
 * the lab and the bench.
 */
@Command(
    name = "kvrouter",
    mixinStandardHelpOptions = true,
    versionProvider = NodeMain.Version.class,
    description = "KV-cache-aware request router for LLM inference clusters.",
    subcommands = {IngressCommand.class, AgentCommand.class, CommandLine.HelpCommand.class})
public final class NodeMain implements Runnable {

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    launch(commandLine(), args);
  }

  /** The configured command line, for tests. */
  public static CommandLine commandLine() {
    return configured(new NodeMain());
  }

  /** {@code command}'s command line, as every kvrouter command configures it. */
  public static CommandLine configured(Object command) {
    return new CommandLine(command).setCaseInsensitiveEnumValuesAllowed(true);
  }

  /**
   * Runs {@code commandLine} on {@code args} with telemetry off and the common pool sized, then
   * exits with its status (unless it succeeded under {@code -Dkvrouter.keep-running=true}).
   */
  public static void launch(CommandLine commandLine, String[] args) {
    CommonPool.ensureThreads();
    Telemetry.switchOff();
    int code = commandLine.execute(args);
    if (code != 0 || !Boolean.getBoolean("kvrouter.keep-running")) {
      System.exit(code);
    }
  }

  @Override
  public void run() {
    spec.commandLine().usage(System.out);
  }

  /** Version from the jar manifest, or the build's when run from classes. */
  public static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = NodeMain.class.getPackage().getImplementationVersion();
      return new String[] {"kvrouter " + (v == null ? "0.1.0-SNAPSHOT" : v)};
    }
  }
}

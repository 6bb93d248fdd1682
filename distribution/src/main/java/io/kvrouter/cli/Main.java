package io.kvrouter.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code kvrouter} command: one entry point, one subcommand per job. */
@Command(
    name = "kvrouter",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = "KV-cache-aware request router for LLM inference clusters.",
    subcommands = {
      DemoCommand.class,
      IngressCommand.class,
      AgentCommand.class,
      SimEngineCommand.class,
      LabCommand.class,
      BenchCommand.class,
      CommandLine.HelpCommand.class
    })
public final class Main implements Runnable {

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    CommonPool.ensureThreads();
    Telemetry.switchOff();
    int code = commandLine().execute(args);
    if (code != 0 || !Boolean.getBoolean("kvrouter.keep-running")) {
      System.exit(code);
    }
  }

  /** The configured command line, for tests. */
  public static CommandLine commandLine() {
    return new CommandLine(new Main()).setCaseInsensitiveEnumValuesAllowed(true);
  }

  @Override
  public void run() {
    spec.commandLine().usage(System.out);
  }

  /** Version from the jar manifest, or "dev" when run from classes. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Main.class.getPackage().getImplementationVersion();
      return new String[] {"kvrouter " + (v == null ? "0.1.0-SNAPSHOT" : v)};
    }
  }
}

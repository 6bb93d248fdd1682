package io.kvrouter.cli.dev;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

class MainTest {

  private static String run(String... args) {
    CommandLine cli = Main.commandLine();
    StringWriter out = new StringWriter();
    cli.setOut(new PrintWriter(out));
    int code = cli.execute(args);
    assertThat(code).isZero();
    return out.toString();
  }

  @Test
  void topLevelHelp_listsAllSixSubcommands() {
    String usage = run("--help");
    assertThat(usage).startsWith("Usage: kvrouter");
    for (String sub : List.of("demo", "ingress", "agent", "sim-engine", "lab", "bench")) {
      assertThat(usage).containsPattern("(?m)^\\s+" + sub + "\\s");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"demo", "ingress", "agent", "sim-engine", "lab", "bench"})
  void everySubcommand_printsItsOwnUsage(String sub) {
    String usage = run(sub, "--help");
    assertThat(usage).startsWith("Usage: kvrouter " + sub);
    assertThat(usage).contains("-h, --help");
  }

  @Test
  void benchPicker_isASubcommandOfBench_withoutBenchsUrl() {
    assertThat(run("bench", "picker", "--help")).startsWith("Usage: kvrouter bench picker");
    assertThat(Main.commandLine().execute("bench")).as("bench still needs --url").isEqualTo(2);
  }

  @Test
  void loraModules_areNameEqualsPath_asVllmTakesThem() {
    SimEngineCommand sim = new SimEngineCommand();
    new CommandLine(sim).parseArgs("--lora-modules", "sql=/a/sql", "chat=/a/chat");
    assertThat(sim.engine.loraModules())
        .containsExactly(
            java.util.Map.entry("sql", "/a/sql"), java.util.Map.entry("chat", "/a/chat"));
    SimEngineCommand bad = new SimEngineCommand();
    new CommandLine(bad).parseArgs("--lora-modules", "sql");
    org.assertj.core.api.Assertions.assertThatThrownBy(bad.engine::loraModules)
        .hasMessageContaining("name=path");
  }

  @Test
  void runtimeLoraLoading_isTheOptionWhenGiven_elseTheCallersDefault() {
    SimEngineCommand on = new SimEngineCommand();
    new CommandLine(on).parseArgs("--allow-runtime-lora-updating");
    assertThat(on.engine.runtimeLora(false)).isTrue();
    SimEngineCommand off = new SimEngineCommand();
    new CommandLine(off).parseArgs("--no-allow-runtime-lora-updating");
    assertThat(off.engine.runtimeLora(true)).isFalse();
    // Not given: the caller's default, unless the environment sets vLLM's variable.
    if (System.getenv("VLLM_ALLOW_RUNTIME_LORA_UPDATING") == null) {
      SimEngineCommand unset = new SimEngineCommand();
      new CommandLine(unset).parseArgs();
      assertThat(unset.engine.runtimeLora(true)).isTrue();
      assertThat(unset.engine.runtimeLora(false)).isFalse();
    }
  }

  @Test
  void slidingWindow_runsAHybridModel_offByDefault() {
    SimEngineCommand sim = new SimEngineCommand();
    new CommandLine(sim).parseArgs("--sliding-window", "4096");
    assertThat(sim.engine.config().slidingWindow()).isEqualTo(4096);
    SimEngineCommand plain = new SimEngineCommand();
    new CommandLine(plain).parseArgs();
    assertThat(plain.engine.config().slidingWindow()).isZero();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "--jitter-ms=-1|--jitter-ms must be >= 0",
        "--repeats=0|--repeats must be >= 1",
        "--repeats=2 --routers=1,2|--repeats applies to one lab",
        "--jitter-ms=2 --arrivals=both|--jitter-ms in a router sweep wants --arrivals recorded",
        "--kill-migration=1,2|--kill-migration applies to one lab with --kill-replica"
      })
  void lab_refusesABadJitterOrRepeats_withTheReason(String caseLine) {
    String[] parts = caseLine.split("\\|");
    List<String> args =
        new java.util.ArrayList<>(List.of("lab", "--workload=sglang-gsp", "--limit=4"));
    args.addAll(List.of(parts[0].split(" ")));
    CommandLine cli = Main.commandLine();
    StringWriter err = new StringWriter();
    cli.setErr(new PrintWriter(err));
    assertThat(cli.execute(args.toArray(String[]::new))).isEqualTo(2);
    assertThat(err.toString()).contains(parts[1]);
  }
}

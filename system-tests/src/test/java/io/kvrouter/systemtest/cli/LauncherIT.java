package io.kvrouter.systemtest.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Runs the root {@code ./kvrouter} script as users do (the jar is fresh after package). */
class LauncherIT {

  private static String launch(String... args) throws Exception {
    Path script = Path.of("..", "kvrouter").toAbsolutePath().normalize();
    assertThat(script).exists();
    List<String> command = new java.util.ArrayList<>(List.of("bash", script.toString()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("launcher finished").isTrue();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.exitValue()).as(out).isZero();
    return out;
  }

  @Test
  void rootScript_printsUsageOfEverySubcommand() throws Exception {
    assertThat(launch("--help")).contains("Usage: kvrouter");
    for (String sub : List.of("demo", "ingress", "agent", "sim-engine", "lab", "bench")) {
      assertThat(launch(sub, "--help")).contains("Usage: kvrouter " + sub);
    }
  }

  @Test
  void rootScript_doesNotRebuildAFreshJar() throws Exception {
    Path jar = FatJarNodeIT.fatJar();
    long before = Files.getLastModifiedTime(jar).toMillis();
    String out = launch("--version");
    assertThat(out).contains("kvrouter").doesNotContain("building the jar");
    assertThat(Files.getLastModifiedTime(jar).toMillis()).isEqualTo(before);
  }
}

package io.kvrouter.loadtest.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@code dashboard-test/} (beside the modules): {@code npm ci} when playwright-core is not
 * installed yet (npm never downloads a browser for playwright-core), then {@code node} scripts.
 */
final class NodeScript {

  static final Path CHROMIUM = Path.of("/usr/bin/chromium");

  private NodeScript() {}

  static Path dir() {
    Path dir = Path.of(System.getProperty("user.dir")).resolve("../dashboard-test").normalize();
    assertThat(dir.resolve("dashboard.test.mjs")).as("dashboard-test/ beside the modules").exists();
    return dir;
  }

  /** Installs the pinned playwright-core when missing. */
  static void install(Path dir) throws Exception {
    if (!Files.isDirectory(dir.resolve("node_modules/playwright-core"))) {
      run(dir, List.of("npm", "ci", "--no-audit", "--no-fund"), Map.of(), 300);
    }
  }

  /** Runs {@code command} in {@code dir}; asserts it finished in time with exit code 0; returns its output. */
  static String run(Path dir, List<String> command, Map<String, String> env, long seconds) throws Exception {
    File log = Files.createTempFile("kvrouter-dashboard", ".log").toFile();
    ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).redirectOutput(log);
    pb.environment().putAll(env);
    Process p = pb.start();
    boolean finished = p.waitFor(seconds, TimeUnit.SECONDS);
    if (!finished) {
      p.destroyForcibly();
    }
    String out = Files.readString(log.toPath(), StandardCharsets.UTF_8);
    System.out.println(out);
    assertThat(finished).as("%s finished in %d s:%n%s", command, seconds, out).isTrue();
    assertThat(p.exitValue()).as("%s exit code; output:%n%s", command, out).isZero();
    return out;
  }

  /** {@code load-tests/target/dashboard-artifacts}, created. */
  static Path artifacts() throws Exception {
    Path dir = Path.of(System.getProperty("user.dir")).resolve("target/dashboard-artifacts");
    Files.createDirectories(dir);
    return dir;
  }
}

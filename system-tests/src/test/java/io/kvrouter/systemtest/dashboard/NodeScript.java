package io.kvrouter.systemtest.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.systemtest.testing.ExternalProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Runs {@code system-tests/dashboard/}: {@code npm ci} when playwright-core is not installed yet
 * (npm never downloads a browser for playwright-core), then {@code node} scripts.
 */
final class NodeScript {

  static final Path CHROMIUM = Path.of("/usr/bin/chromium");

  private NodeScript() {}

  static Path dir() {
    Path dir = Path.of(System.getProperty("user.dir")).resolve("dashboard");
    assertThat(dir.resolve("dashboard.test.mjs")).as("system-tests/dashboard/").exists();
    return dir;
  }

  /** Installs the pinned playwright-core when missing. */
  static void install(Path dir) throws Exception {
    if (!Files.isDirectory(dir.resolve("node_modules/playwright-core"))) {
      run(dir, List.of("npm", "ci", "--no-audit", "--no-fund"), Map.of(), 300);
    }
  }

  /**
   * Runs {@code command} in {@code dir}; asserts it finished in time with exit code 0; returns its
   * output.
   */
  static String run(Path dir, List<String> command, Map<String, String> env, long seconds)
      throws Exception {
    String out = ExternalProcess.run(dir, command, env, seconds);
    System.out.println(out);
    return out;
  }

  /** {@code system-tests/target/dashboard-artifacts}, created. */
  static Path artifacts() throws Exception {
    Path dir = Path.of(System.getProperty("user.dir")).resolve("target/dashboard-artifacts");
    Files.createDirectories(dir);
    return dir;
  }
}

package io.kvrouter.systemtest.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs an outside program (npm, node) for a test, bounded in time, and checks it succeeded. */
public final class ExternalProcess {

  private ExternalProcess() {}

  /**
   * Runs {@code command} in {@code dir}; asserts it finished in time with exit code 0; returns its
   * output.
   */
  public static String run(Path dir, List<String> command, Map<String, String> env, long seconds)
      throws Exception {
    File log = Files.createTempFile("kvrouter-process", ".log").toFile();
    ProcessBuilder pb =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log);
    pb.environment().putAll(env);
    Process p = pb.start();
    boolean finished = p.waitFor(seconds, TimeUnit.SECONDS);
    if (!finished) {
      p.destroyForcibly();
    }
    String out = Files.readString(log.toPath(), StandardCharsets.UTF_8);
    assertThat(finished).as("%s finished in %d s:%n%s", command, seconds, out).isTrue();
    assertThat(p.exitValue()).as("%s exit code; output:%n%s", command, out).isZero();
    return out;
  }
}

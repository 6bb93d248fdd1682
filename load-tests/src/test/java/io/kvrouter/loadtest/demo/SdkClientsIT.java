package io.kvrouter.loadtest.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The official {@code openai} and {@code @anthropic-ai/sdk} npm clients (chat, streaming chat,
 * completions; messages, streaming messages) against the demo cluster: {@code clients/sdk.test.mjs}
 * run with Node's test runner. Installs the pinned clients with {@code npm ci} when missing.
 */
class SdkClientsIT {

  private static Path clientsDir() {
    Path dir = Path.of(System.getProperty("user.dir")).resolve("../clients").normalize();
    assertThat(dir.resolve("sdk.test.mjs")).as("clients/ beside the modules").exists();
    return dir;
  }

  private static String run(Path dir, List<String> command, java.util.Map<String, String> env, long seconds)
      throws Exception {
    File log = Files.createTempFile("kvrouter-sdk", ".log").toFile();
    ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).redirectOutput(log);
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

  @Test
  void officialOpenAiAndAnthropicClients_workAgainstTheDemo() throws Exception {
    Path dir = clientsDir();
    if (!Files.isDirectory(dir.resolve("node_modules/openai"))
        || !Files.isDirectory(dir.resolve("node_modules/@anthropic-ai/sdk"))) {
      run(dir, List.of("npm", "ci", "--no-audit", "--no-fund"), java.util.Map.of(), 300);
    }
    DemoOptions options = DemoOptions.defaults().onFreePorts().withSpeedup(20);
    try (DemoCluster cluster = DemoCluster.start(options)) {
      cluster.awaitReady(Duration.ofSeconds(60));
      String out =
          run(
              dir,
              List.of("node", "--test", "sdk.test.mjs"),
              java.util.Map.of("KVROUTER_URL", cluster.ingressUrls().get(1), "KVROUTER_MODEL", options.model()),
              180);
      System.out.println(out);
      assertThat(out).contains("# pass 7").contains("# fail 0");
    }
  }
}

package io.kvrouter.loadtest.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.loadtest.testing.ExternalProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
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

  @Test
  void officialOpenAiAndAnthropicClients_workAgainstTheDemo() throws Exception {
    Path dir = clientsDir();
    if (!Files.isDirectory(dir.resolve("node_modules/openai"))
        || !Files.isDirectory(dir.resolve("node_modules/@anthropic-ai/sdk"))) {
      ExternalProcess.run(
          dir, List.of("npm", "ci", "--no-audit", "--no-fund"), java.util.Map.of(), 300);
    }
    DemoOptions options = DemoOptions.defaults().onFreePorts().withSpeedup(20);
    try (DemoCluster cluster = DemoCluster.start(options)) {
      cluster.awaitReady(Duration.ofSeconds(60));
      String out =
          ExternalProcess.run(
              dir,
              List.of("node", "--test", "sdk.test.mjs"),
              java.util.Map.of(
                  "KVROUTER_URL", cluster.ingressUrls().get(1), "KVROUTER_MODEL", options.model()),
              180);
      System.out.println(out);
      assertThat(out).contains("# pass 7").contains("# fail 0");
    }
  }
}

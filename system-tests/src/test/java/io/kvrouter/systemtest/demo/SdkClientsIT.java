package io.kvrouter.systemtest.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.cli.dev.DemoCluster;
import io.kvrouter.cli.dev.DemoOptions;
import io.kvrouter.sim.SimApis;
import io.kvrouter.systemtest.testing.ExternalProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The official {@code openai} and {@code @anthropic-ai/sdk} npm clients against the demo cluster,
 * run with Node's test runner: {@code clients/sdk.test.mjs} (chat, streaming chat, completions;
 * messages, streaming messages), {@code clients/anthropic-agent.test.mjs} (a tool-using agent
 * conversation through both ingresses, whole and streamed: tool definitions in the prompt, {@code
 * tool_use} and {@code tool_result} turns, the engine seeing {@code tool} messages, the replica
 * kept, cached tokens from the second turn on, {@code count_tokens} equal to the engine's prompt)
 * and {@code clients/responses.test.mjs} ({@code responses.create} whole and streamed, {@code
 * previous_response_id} across ingresses, function calls). The agent conversation runs twice: on
 * engines that serve {@code /v1/messages} themselves (forwarded unchanged) and on engines that
 * serve only OpenAI chat (translated by the ingress). {@code clients/pd.test.mjs} streams a long
 * chat through a disaggregated demo (2 prefill, 2 decode engines): one prefill hop, one decode with
 * the handshake, the whole answer; a short chat skips the prefill hop. Installs the pinned clients
 * with {@code npm ci} when missing.
 */
class SdkClientsIT {

  private static Path dir;

  @BeforeAll
  static void clients() throws Exception {
    dir = Path.of(System.getProperty("user.dir")).resolve("clients");
    assertThat(dir.resolve("sdk.test.mjs")).as("system-tests/clients/").exists();
    if (!Files.isDirectory(dir.resolve("node_modules/openai"))
        || !Files.isDirectory(dir.resolve("node_modules/@anthropic-ai/sdk"))) {
      ExternalProcess.run(dir, List.of("npm", "ci", "--no-audit", "--no-fund"), Map.of(), 300);
    }
  }

  private static String run(DemoCluster cluster, DemoOptions options, String... files)
      throws Exception {
    List<String> command = new ArrayList<>(List.of("node", "--test", "--test-concurrency=1"));
    command.addAll(List.of(files));
    String out =
        ExternalProcess.run(
            dir,
            command,
            Map.of(
                "KVROUTER_URL", cluster.ingressUrls().get(1),
                "KVROUTER_URLS", String.join(",", cluster.ingressUrls()),
                "KVROUTER_ENGINE_URLS", String.join(",", cluster.engineUrls()),
                "KVROUTER_MODEL", options.model()),
            300);
    System.out.println(out);
    return out;
  }

  @Test
  void officialClients_workAgainstTheDemo_whoseEnginesServeMessagesAndResponses() throws Exception {
    DemoOptions options = DemoOptions.defaults().onFreePorts().withSpeedup(20);
    try (DemoCluster cluster = DemoCluster.start(options)) {
      cluster.awaitReady(Duration.ofSeconds(60));
      String out =
          run(cluster, options, "sdk.test.mjs", "anthropic-agent.test.mjs", "responses.test.mjs");
      assertThat(out).contains("# pass 14").contains("# fail 0");
    }
  }

  @Test
  void officialOpenAiClient_streamsThroughAPrefillDecodeCluster() throws Exception {
    DemoOptions options =
        DemoOptions.defaults().onFreePorts().withSpeedup(20).withDisaggregation(2, 2);
    try (DemoCluster cluster = DemoCluster.start(options)) {
      cluster.awaitReady(Duration.ofSeconds(60));
      String out = run(cluster, options, "pd.test.mjs");
      assertThat(out).contains("# pass 2").contains("# fail 0");
    }
  }

  @Test
  void anthropicAgentConversation_isTranslatedForEnginesThatOnlySpeakChat() throws Exception {
    DemoOptions options = DemoOptions.defaults().onFreePorts().withSpeedup(20);
    try (DemoCluster cluster = DemoCluster.start(options, SimApis.chatOnly())) {
      cluster.awaitReady(Duration.ofSeconds(60));
      String out = run(cluster, options, "anthropic-agent.test.mjs");
      assertThat(out).contains("# pass 4").contains("# fail 0");
    }
  }
}
